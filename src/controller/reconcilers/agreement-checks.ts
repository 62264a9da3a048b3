/**
 * What the controller checks of an intent agreement before storing it. Pure (no I/O).
 *
 * - `checkAgreementSpec`: the spec mapped to its record (`agreementFromSpec`) and validated with
 *   the JSON Schema (SPEC_INVALID naming the spec path and rule), then prepared
 *   (`prepareAgreement`) and checked for integrity (`integrityRefusals`).
 * - `integrityRefusals` (condition `Signed`): every mandate signature that is present verifies
 *   (SIGNATURE_INVALID) and is present once the state requires it (MANDATE_UNSIGNED), the event
 *   chain (EVENT_CHAIN_BROKEN), the ledger (LEDGER_CHAIN_BROKEN), a carried revocation
 *   (REVOCATION_UNVERIFIED); `parent_limits` (PARENT_LIMITS_EXCEEDED, condition `Valid`).
 * - `bindingRefusals` (condition `Valid`): against the delegation it is bound to, each mandate is
 *   signed by the delegation principal's key (PRINCIPAL_KEY_MISMATCH), names the delegation's
 *   agent (AGENT_MISMATCH) and, when the scope binds intents, a bound intent (INTENT_NOT_BOUND).
 */
import { type IntentAgreement, prepareAgreement } from "../../core/agreement/index.js";
import { agreementFromSpec } from "../../core/crd/index.js";
import type { PreparedAgreement, PreparedDelegation } from "../../core/evaluate/index.js";
import { SIGNED_STATUSES, validate } from "../../core/schemas/index.js";
import { privateKeyRefusals, schemaRefusal, type Refusal } from "../spec-errors.js";

/** The outcome of `checkAgreementSpec`: the record when it validates, and every refusal. */
export interface AgreementCheck {
  record?: IntentAgreement;
  prepared?: PreparedAgreement;
  /** `spec.delegationRef.name`. */
  delegationName?: string;
  refusals: Refusal[];
}

const SIGNED: ReadonlySet<string> = new Set(SIGNED_STATUSES as readonly string[]);

/** Integrity refusals of a prepared agreement (see the module comment). `where` prefixes paths (`spec`). */
export function integrityRefusals(p: PreparedAgreement, where = "spec"): Refusal[] {
  const out: Refusal[] = [];
  const mustBeSigned = SIGNED.has(p.agreement.status);
  p.mandates.forEach((m, i) => {
    const at = `${where}.mandates[${i}] (intent ${m.mandate.intent_id})`;
    if (m.signature === "invalid") {
      out.push({ condition: "Signed", code: "SIGNATURE_INVALID", message: `${at}: the signature does not verify over mandate ${m.hash}` });
    } else if (m.signature === "missing" && mustBeSigned) {
      out.push({ condition: "Signed", code: "MANDATE_UNSIGNED", message: `${at}: state ${p.agreement.status} needs every mandate signed by the principal` });
    }
  });
  if (p.eventChainProblem !== undefined) out.push({ condition: "Signed", code: "EVENT_CHAIN_BROKEN", message: `${where}.events: ${p.eventChainProblem}` });
  if (p.ledger.state === "broken") out.push({ condition: "Signed", code: "LEDGER_CHAIN_BROKEN", message: `${where}.ledger: ${p.ledger.problem}` });
  if (typeof p.revocation === "object")
    out.push({ condition: "Signed", code: "REVOCATION_UNVERIFIED", message: `${where}.revocation: ${p.revocation.problem}` });
  if (p.parentLimitsProblem !== undefined)
    out.push({ condition: "Valid", code: "PARENT_LIMITS_EXCEEDED", message: `${where}.parent_limits: ${p.parentLimitsProblem}` });
  return out;
}

/** Refusals of an agreement against the delegation it is bound to (see the module comment). */
export function bindingRefusals(p: PreparedAgreement, d: PreparedDelegation, where = "spec"): Refusal[] {
  const out: Refusal[] = [];
  const delegation = d.delegation;
  const bound = d.scope.intents;
  p.mandates.forEach((m, i) => {
    const at = `${where}.mandates[${i}] (intent ${m.mandate.intent_id})`;
    if (m.signature === "valid" && d.principalKid !== undefined && m.principalKid !== d.principalKid) {
      out.push({
        condition: "Valid",
        code: "PRINCIPAL_KEY_MISMATCH",
        message: `${at} is signed by ${m.principalKid ?? "an unknown key"}, not by the key of delegation ${delegation.delegation_id}'s principal (${d.principalKid})`,
      });
    }
    if (m.mandate.agent.agent_id !== delegation.agent.agent_id) {
      out.push({
        condition: "Valid",
        code: "AGENT_MISMATCH",
        message: `${at} names agent ${m.mandate.agent.agent_id}, not ${delegation.agent.agent_id}, the agent of delegation ${delegation.delegation_id}`,
      });
    }
    if (bound && !bound.has(m.mandate.intent_id)) {
      out.push({
        condition: "Valid",
        code: "INTENT_NOT_BOUND",
        message: `${at}: delegation ${delegation.delegation_id} does not bind intent ${m.mandate.intent_id} (spec.scope.intents)`,
      });
    }
  });
  return out;
}

/** Maps, validates, prepares and checks an IntentAgreement's spec at `now` (epoch ms). */
export async function checkAgreementSpec(spec: unknown, now: number): Promise<AgreementCheck> {
  const { record, delegationName } = agreementFromSpec(spec);
  const refusals: Refusal[] = [];
  const secrets = privateKeyRefusals(spec);
  if (secrets.length > 0) return delegationName === undefined ? { refusals: secrets } : { refusals: secrets, delegationName };
  if (delegationName === undefined)
    refusals.push({ condition: "Valid", code: "SPEC_INVALID", message: "spec.delegationRef.name: is required (the Delegation this agreement is bound to)" });
  const v = validate<IntentAgreement>("intent-agreement", record);
  if (!v.ok) {
    refusals.push(schemaRefusal(v.errors));
    return delegationName === undefined ? { refusals } : { refusals, delegationName };
  }
  const prepared = await prepareAgreement(v.value, { now });
  refusals.push(...integrityRefusals(prepared));
  const out: AgreementCheck = { record: v.value, prepared, refusals };
  if (delegationName !== undefined) out.delegationName = delegationName;
  return out;
}

/** True when every mandate carries a signature that verifies (what the log records). */
export function fullySigned(p: PreparedAgreement): boolean {
  return p.mandates.length > 0 && p.mandates.every((m) => m.signature === "valid");
}
