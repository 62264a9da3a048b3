/**
 * Approvals of a STEP_UP (issue 32, docs/reference/approvals.md): which STEP_UPs a principal
 * can clear, what a pending approval commits to, the text the principal sees and signs, and
 * the two ways it is signed (a JWS of the principal's key, a WebAuthn challenge). Pure: no I/O.
 *
 * Promises:
 * - An approval's content (`approvalContent`) names exactly one request: its request hash
 *   (agent, action id and type, amount, currency, merchant, item, category, proposed_at, ...),
 *   and repeats the amount, currency and merchant in clear; the principal's decision is signed
 *   over the RFC 8785 canonical bytes of that content plus `decision`, never over anything the
 *   agent chooses later.
 * - Only STEP_UPs whose every reason is in APPROVABLE_REASONS open an approval; an approval
 *   clears exactly those reasons on the retry of the same request and nothing else (never a
 *   DENY reason: a budget, a ceiling, a revocation).
 */
import { canonicalBytes, sha256, type HashString } from "../canonical/index.js";
import type { ReasonCode } from "../evaluate/index.js";

/** The protected-header `typ` of an approval signed with the principal's key (`writ approval sign`). */
export const APPROVAL_TYP = "writ-approval+jws";

/** Reasons the principal's confirmation clears (each with required_action PRINCIPAL_CONFIRMATION). */
export const APPROVABLE_REASONS: ReadonlySet<ReasonCode> = new Set<ReasonCode>([
  "OVER_BROAD_INTENT",
  "INTENT_DRIFT",
  "PRINCIPAL_NOT_PRESENT",
  "RISK_SCORE_ABOVE_LIMIT",
]);

/** True when a STEP_UP with these reasons can be resolved by the principal's approval. */
export function approvable(reasons: readonly ReasonCode[]): boolean {
  return reasons.length > 0 && reasons.every((r) => APPROVABLE_REASONS.has(r));
}

/** The states of an approval. `expired` is never stored: a pending approval past `expires_at` is expired. */
export type ApprovalStatus = "pending" | "approved" | "declined" | "expired";

/** A principal's decision. */
export type ApprovalDecision = "approve" | "decline";

/** What an approval commits to (also the body of `GET /v1/approvals/{id}` without its state). */
export interface ApprovalContent {
  writ_approval: 1;
  approval_id: string;
  agent_id: string;
  principal_id: string;
  agreement_id: string;
  action_id: string;
  action_type: string;
  amount: number;
  currency: string;
  merchant?: string;
  request_hash: HashString;
  reasons: ReasonCode[];
  confirmation_text: string;
  expires_at: string;
}

/** What a decision signs: the content and the decision. */
export interface SignedApprovalPayload extends ApprovalContent {
  decision: ApprovalDecision;
}

/** The text the principal reads and signs (deterministic from the request). */
export function confirmationText(a: { agent_id: string; action_type: string; amount: number; currency: string; merchant?: string; action_id: string }): string {
  const to = a.merchant !== undefined ? ` to ${a.merchant}` : "";
  return `Approve ${a.action_type} of ${String(a.amount)} ${a.currency}${to} by agent ${a.agent_id} (action ${a.action_id})?`;
}

/** The payload a decision signs. */
export function decisionPayload(content: ApprovalContent, decision: ApprovalDecision): SignedApprovalPayload {
  return { ...content, decision };
}

/**
 * The WebAuthn challenge of a decision: base64url of SHA-256 of the canonical bytes of
 * {@link decisionPayload}. The assertion's clientDataJSON carries it, so the authenticator's
 * signature commits to the approval's content and the decision.
 */
export function webauthnChallenge(content: ApprovalContent, decision: ApprovalDecision): string {
  return sha256(canonicalBytes(decisionPayload(content, decision))).toString("base64url");
}

/** The state of an approval at `nowMs`. */
export function approvalStatus(stored: "pending" | "approved" | "declined", expiresAtMs: number, nowMs: number): ApprovalStatus {
  if (stored === "pending" && nowMs >= expiresAtMs) return "expired";
  return stored;
}
