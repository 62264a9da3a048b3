/**
 * The request and answer of `POST /v1/verify` (docs/verify.md): the JSON schema that
 * validates the body (and documents it in /openapi.json), the action the engine evaluates,
 * and the request hash that makes a reused `action_id` detectable.
 *
 * Promise: the request hash (`readRequest`) is the `sha256:` hash of the RFC 8785 canonical
 * JSON of exactly the members this module knows (unknown members are ignored), after schema
 * validation, so the same request always has the same hash and any change of a known member
 * changes it.
 */
import { sha256Hash, type HashString } from "../../core/canonical/index.js";
import { type Action, type Finding, type ReasonCode, type RequiredAction, type SvcDecision, type Verdict, REASON_CODES } from "../../core/evaluate/index.js";
import { AGENT_ID_PATTERN } from "../../core/registry/index.js";
import { NO_NUL_PATTERN, textSchema } from "../../core/schemas/index.js";

/** Longest id accepted in a verify request (an action, agreement or intent id). */
export const MAX_VERIFY_ID_LENGTH = 256;
/** Longest merchant, item or category. */
export const MAX_VERIFY_TEXT_LENGTH = 200;
/** Largest amount accepted (major units); larger is a 400. */
export const MAX_VERIFY_AMOUNT = 1e12;

/** The action as sent. Amount in major units. */
export interface VerifyAction {
  action_id: string;
  action_type: string;
  amount: number;
  currency: string;
  proposed_at: string;
  merchant?: string;
  item?: string;
  category?: string;
  intent_id?: string;
}

/** A validated verify request. */
export interface VerifyRequest {
  agent_id: string;
  action: VerifyAction;
  agreement_id?: string;
  risk_score?: number;
  principal_present?: boolean;
  ledger_sequence?: number;
}

/** The answer (also what is stored per action, without `ledger_entry`). */
export interface VerifyResponse {
  verdict: Verdict;
  svc_decision: SvcDecision;
  reasons: ReasonCode[];
  messages: Finding[];
  required_action: RequiredAction;
  agent_id: string;
  agreement_id: string | null;
  action_id: string;
  intent_id?: string;
  /** On ALLOW: the spend's ledger entry. */
  ledger_entry?: { sequence: number; entry_hash: HashString };
  /** A STEP_UP the principal can clear, and the answers that follow it: its approval (src/verify/approvals.ts). */
  approval_id?: string;
  approval_url?: string;
  approval_status?: string;
  approval_expires_at?: string;
  /** What the principal is asked to confirm (the text the approval signs). */
  confirmation_text?: string;
}

const id = textSchema({ minLength: 1, maxLength: MAX_VERIFY_ID_LENGTH });
const text = textSchema({ maxLength: MAX_VERIFY_TEXT_LENGTH });

/** JSON schema of the request body. */
export const VERIFY_BODY_SCHEMA = {
  type: "object",
  required: ["agent_id", "action"],
  properties: {
    agent_id: { type: "string", pattern: AGENT_ID_PATTERN },
    action: {
      type: "object",
      required: ["action_id", "action_type", "amount", "currency", "proposed_at"],
      properties: {
        action_id: { ...id, description: "The action's id: the same id is the same action (idempotency key)" },
        action_type: { type: "string", minLength: 1, maxLength: 64, pattern: NO_NUL_PATTERN, description: "purchase, refund, ..." },
        amount: { type: "number", minimum: 0, maximum: MAX_VERIFY_AMOUNT, description: "Major units of currency" },
        currency: { type: "string", pattern: "^[A-Z]{3}$" },
        proposed_at: { type: "string", format: "date-time" },
        merchant: text,
        item: text,
        category: text,
        intent_id: { ...id, description: "The intent the action is for; also selects the agreement among several" },
      },
    },
    agreement_id: { ...id, description: "Selects one of the agent's active agreements" },
    risk_score: { type: "number", minimum: 0, maximum: 100, description: "Risk score 0-100 from the caller's risk engine" },
    principal_present: { type: "boolean", description: "The principal is present (for principal_present conditions)" },
    ledger_sequence: {
      type: "integer",
      minimum: 0,
      maximum: 2147483647,
      description: "The ledger sequence the caller has seen; higher than stored is LEDGER_TRUNCATED",
    },
  },
} as const;

const finding = { type: "object", required: ["code", "message"], properties: { code: { type: "string" }, message: { type: "string" } } } as const;

/** JSON schema of the answer. */
export const VERIFY_RESPONSE_SCHEMA = {
  type: "object",
  required: ["verdict", "svc_decision", "reasons", "messages", "required_action", "agent_id", "agreement_id", "action_id"],
  properties: {
    verdict: { type: "string", enum: ["ALLOW", "DENY", "STEP_UP"] },
    svc_decision: { type: "string", enum: ["ALLOW", "BLOCK", "STEP_UP", "REVOKE"] },
    reasons: { type: "array", items: { type: "string", enum: REASON_CODES } },
    messages: { type: "array", items: finding },
    required_action: { type: "string" },
    agent_id: { type: "string" },
    agreement_id: { type: ["string", "null"] },
    action_id: { type: "string" },
    intent_id: { type: "string" },
    ledger_entry: { type: "object", required: ["sequence", "entry_hash"], properties: { sequence: { type: "integer" }, entry_hash: { type: "string" } } },
    approval_id: { type: "string", description: "The approval a STEP_UP opened (poll GET /v1/approvals/{id}; send the same request again once decided)" },
    approval_url: { type: "string", description: "Where the principal approves or declines (the portal)" },
    approval_status: { type: "string", enum: ["pending", "approved", "declined", "expired"] },
    approval_expires_at: { type: "string", format: "date-time" },
    confirmation_text: { type: "string", description: "What the principal is asked to confirm: the text the approval signs" },
  },
} as const;

const q = JSON.stringify;

/**
 * The RFC 8785 canonical JSON of the known members of `req` (what is hashed), written out
 * member by member in RFC 8785 order (by UTF-16 code units; every name here is plain ASCII).
 * Every value is a string, a finite number (the schema's bounds) or a boolean, whose
 * `JSON.stringify` IS its canonical form, so the text equals what `canonicalJson` gives for
 * those members (checked by test/unit/verify/request-hash.test.ts), without building an object
 * or sorting keys on every verify.
 */
function canonicalKnown(req: VerifyRequest): string {
  const a = req.action;
  let s = `{"action":{"action_id":${q(a.action_id)},"action_type":${q(a.action_type)},"amount":${q(a.amount)}`;
  if (a.category !== undefined) s += `,"category":${q(a.category)}`;
  s += `,"currency":${q(a.currency)}`;
  if (a.intent_id !== undefined) s += `,"intent_id":${q(a.intent_id)}`;
  if (a.item !== undefined) s += `,"item":${q(a.item)}`;
  if (a.merchant !== undefined) s += `,"merchant":${q(a.merchant)}`;
  s += `,"proposed_at":${q(a.proposed_at)}},"agent_id":${q(req.agent_id)}`;
  if (req.agreement_id !== undefined) s += `,"agreement_id":${q(req.agreement_id)}`;
  if (req.ledger_sequence !== undefined) s += `,"ledger_sequence":${q(req.ledger_sequence)}`;
  if (req.principal_present !== undefined) s += `,"principal_present":${q(req.principal_present)}`;
  if (req.risk_score !== undefined) s += `,"risk_score":${q(req.risk_score)}`;
  return `${s}}`;
}

/**
 * What a verify needs of its request, computed once: the action the engine evaluates (the
 * request's known action members, acted by the request's agent) and the request hash (see the
 * module comment).
 */
export function readRequest(req: VerifyRequest): { action: Action; hash: HashString } {
  const a = req.action;
  const action: Action = {
    action_id: a.action_id,
    action_type: a.action_type,
    amount: a.amount,
    currency: a.currency,
    proposed_at: a.proposed_at,
    agent_id: req.agent_id,
  };
  if (a.merchant !== undefined) action.merchant = a.merchant;
  if (a.item !== undefined) action.item = a.item;
  if (a.category !== undefined) action.category = a.category;
  if (a.intent_id !== undefined) action.intent_id = a.intent_id;
  return { action, hash: sha256Hash(canonicalKnown(req)) };
}
