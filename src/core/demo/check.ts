/**
 * The demo check: builds the demo records (build.ts), prepares them and evaluates the payment
 * with the same engine as verify (`evaluate`), at `now`, with the default policy, no known
 * revocations and no rates (a payment in another currency than the intent steps up with
 * CURRENCY_MISMATCH). Pure apart from the clock value it is given; async only for signing.
 *
 * Same request and same UTC day give the same answer, except when the outcome depends on the
 * time itself (a `time_limit` that passes during the day).
 */
import { mandateHash, prepareAgreement, type AgreementStatus } from "../agreement/index.js";
import { prepareDelegation } from "../delegation/index.js";
import {
  DEFAULT_POLICY,
  NO_REVOCATIONS,
  evaluate,
  type Finding,
  type ReasonCode,
  type RequiredAction,
  type SvcDecision,
  type Verdict,
} from "../evaluate/index.js";
import type { HashString } from "../canonical/index.js";
import { buildDemoRecords } from "./build.js";
import { DEMO_AGENT_ID, DEMO_PRINCIPAL, demoPrincipalFingerprint } from "./keys.js";
import type { DemoCheckRequest } from "./request.js";

/** The answer of `POST /demo/check`. */
export interface DemoCheckResult {
  verdict: Verdict;
  svc_decision: SvcDecision;
  reasons: ReasonCode[];
  messages: Finding[];
  required_action: RequiredAction;
  /** The signed mandate's rendering: what the principal confirms. */
  confirmation_text: string;
  mandate_hash: HashString;
  /** The fixed demo principal id. */
  principal: string;
  /** `sha256:` RFC 7638 thumbprint of the demo principal key. */
  principal_fingerprint: HashString;
  agent_id: string;
  agreement_id: string;
  status: AgreementStatus;
  demo: true;
}

/** Runs the demo check for a checked request at `now`. */
export async function runDemoCheck(req: DemoCheckRequest, now: Date): Promise<DemoCheckResult> {
  const nowMs = now.getTime();
  const { agreement, delegation, action } = await buildDemoRecords(req, nowMs);
  const prepared = await prepareAgreement(agreement, { now: nowMs });
  const decision = evaluate(prepareDelegation(delegation), prepared, action, {
    now: nowMs,
    policy: DEFAULT_POLICY,
    revocations: NO_REVOCATIONS,
  });
  const mandate = agreement.mandates[0];
  if (!mandate) throw new TypeError("the demo agreement has no mandate");
  return {
    verdict: decision.verdict,
    svc_decision: decision.svc_decision,
    reasons: decision.reasons,
    messages: decision.messages,
    required_action: decision.required_action,
    confirmation_text: mandate.rendering ?? "",
    mandate_hash: mandateHash(mandate),
    principal: DEMO_PRINCIPAL.id,
    principal_fingerprint: demoPrincipalFingerprint(),
    agent_id: DEMO_AGENT_ID,
    agreement_id: agreement.agreement_id,
    status: agreement.status,
    demo: true,
  };
}
