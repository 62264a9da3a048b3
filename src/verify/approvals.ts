/**
 * The approvals step of verify (issue 32; docs/reference/approvals.md): what a STEP_UP that the
 * principal can clear becomes. Called from ONE marked place of the pipeline
 * (./pipeline/decide.ts, "[approvals]"), only for a STEP_UP and only when the deps carry
 * `approvals` (the route sets it; without it a STEP_UP is answered as before).
 *
 * For a STEP_UP whose every reason is approvable (src/core/approvals):
 * - no approval for (agent, action_id) yet: one is opened, bound to the request hash, with the
 *   "approval waiting" alert; the answer is the STEP_UP as evaluated plus `approval_id`,
 *   `approval_url`, `approval_status`, `approval_expires_at`, `confirmation_text`, stored as
 *   the action's decision (so any other request with that action_id is ACTION_REUSED, as
 *   always). Once the approval is decided, that stored STEP_UP is replaced by the final answer.
 * - an approval of ANOTHER request hash (the same action_id reused): ACTION_REUSED (409).
 * - pending: the same STEP_UP again (not stored).
 * - declined / expired: DENY APPROVAL_DECLINED / APPROVAL_EXPIRED, stored (final).
 * - approved: the request is evaluated again, now, with the approval's reasons cleared (and
 *   nothing else: a DENY reason, a budget spent meanwhile, a new STEP_UP reason all stay); an
 *   ALLOW then goes through the ordinary spend transaction, which checks the budget again and
 *   stores the ALLOW as the action's one answer, so the approval is used once.
 */
import type { Pool } from "pg";
import { approvable, approvalStatus, confirmationText, type ApprovalContent } from "../core/approvals/index.js";
import type { HashString } from "../core/canonical/index.js";
import { decisionFor, REASONS, type Decision, type ReasonCode } from "../core/evaluate/index.js";
import { findApprovalOfAction, markApprovalUsed, newApprovalId, openApproval, principalOfAgent, releaseStepUp, type StoredApproval } from "../store/approvals.js";
import { expandFanouts } from "../store/alert-fanout.js";
import type { VerifyRequest, VerifyResponse } from "./pipeline/request.js";

/** What verify needs to open approvals (VerifyDeps.approvals). */
export interface ApprovalOptions {
  /** Lifetime of a pending approval, seconds (WRIT_APPROVAL_TTL_SECONDS). */
  ttlSeconds: number;
  /** The principal-facing URL of an approval. */
  urlOf(approvalId: string): string;
}

/** What the approvals step answers. */
export type ApprovalStep =
  | { kind: "answer"; body: VerifyResponse }
  | { kind: "settle"; body: VerifyResponse }
  | { kind: "reused" }
  | { kind: "approved"; decision: Decision; approvalId: string };

/** The verify facts the step reads. */
export interface ApprovalInput {
  pool: Pool;
  now: Date;
  options: ApprovalOptions;
  orgId: string;
  req: VerifyRequest;
  hash: HashString;
  agreementId: string;
  decision: Decision;
  base: Pick<VerifyResponse, "agent_id" | "action_id" | "agreement_id">;
  /** Public JWKs of the grant's principal (may sign a decision with `writ approval sign`). */
  principalKeys: Record<string, unknown>[];
  /** The same evaluation with `cleared` STEP_UP reasons dropped. */
  reevaluate(cleared: ReadonlySet<ReasonCode>): Decision;
}

/** The STEP_UP as evaluated (its reasons unchanged) with the approval's members. */
function pendingAnswer(x: ApprovalInput, fields: Partial<VerifyResponse>): VerifyResponse {
  const d = x.decision;
  const out: VerifyResponse = { verdict: d.verdict, svc_decision: d.svc_decision, reasons: d.reasons, messages: d.messages, required_action: d.required_action, ...x.base, ...fields };
  if (d.intent_id !== undefined) out.intent_id = d.intent_id;
  return out;
}

function approvalFields(a: Pick<StoredApproval, "approvalId" | "content">, status: string, url: string): Partial<VerifyResponse> {
  return { approval_id: a.approvalId, approval_url: url, approval_status: status, approval_expires_at: a.content.expires_at, confirmation_text: a.content.confirmation_text };
}

function single(code: ReasonCode, message: string, base: ApprovalInput["base"], extra: Partial<VerifyResponse>): VerifyResponse {
  const info = REASONS[code];
  return { verdict: info.verdict, svc_decision: decisionFor(info.verdict, false), reasons: [code], messages: [{ code, message }], required_action: info.requiredAction, ...base, ...extra };
}

/** The approvals step for a STEP_UP (see the module comment); undefined: not approvable, answer as before. */
export async function approvalStep(x: ApprovalInput): Promise<ApprovalStep | undefined> {
  if (!approvable(x.decision.reasons)) return undefined;
  const { pool, req } = x;
  let stored = await findApprovalOfAction(pool, req.agent_id, req.action.action_id);
  if (!stored) {
    const principalId = await principalOfAgent(pool, req.agent_id);
    if (principalId === undefined) return undefined;
    const a = req.action;
    const approvalId = newApprovalId();
    const content: ApprovalContent = {
      writ_approval: 1,
      approval_id: approvalId,
      agent_id: req.agent_id,
      principal_id: principalId,
      agreement_id: x.agreementId,
      action_id: a.action_id,
      action_type: a.action_type,
      amount: a.amount,
      currency: a.currency,
      ...(a.merchant !== undefined ? { merchant: a.merchant } : {}),
      request_hash: x.hash,
      reasons: [...x.decision.reasons],
      confirmation_text: confirmationText({ ...a, agent_id: req.agent_id }),
      expires_at: new Date(x.now.getTime() + x.options.ttlSeconds * 1000).toISOString(),
    };
    const alert = {
      event_id: `evt_${approvalId}`,
      type: "approval_waiting" as const,
      agent_id: req.agent_id,
      at: x.now.toISOString(),
      details: { approval_id: approvalId, approval_url: x.options.urlOf(approvalId), confirmation_text: content.confirmation_text, expires_at: content.expires_at, content },
    };
    const pendingBody = pendingAnswer(x, approvalFields({ approvalId, content }, "pending", x.options.urlOf(approvalId)));
    const opened = await openApproval(pool, { content, orgId: x.orgId, principalKeys: x.principalKeys, createdAt: x.now, alert, decision: { ...pendingBody } });
    if ("reused" in opened) return { kind: "reused" };
    stored = opened.approval;
    // The writer expands its own fan-out at once; a delivery worker picks up any it leaves.
    if (opened.fanoutId !== undefined) await expandFanouts(pool, { ids: [opened.fanoutId] }).catch(() => undefined);
    if (opened.created) return { kind: "answer", body: pendingBody };
  }
  if (stored.requestHash !== x.hash) return { kind: "reused" };
  const status = approvalStatus(stored.status, stored.expiresAt.getTime(), x.now.getTime());
  const fields = approvalFields(stored, status, x.options.urlOf(stored.approvalId));
  switch (status) {
    case "pending":
      return { kind: "answer", body: pendingAnswer(x, fields) };
    case "declined":
      await releaseStepUp(pool, req.agent_id, req.action.action_id, x.hash);
      return { kind: "settle", body: single("APPROVAL_DECLINED", `the principal declined approval ${stored.approvalId} at ${stored.decidedAt?.toISOString() ?? ""}`, x.base, fields) };
    case "expired":
      await releaseStepUp(pool, req.agent_id, req.action.action_id, x.hash);
      return { kind: "settle", body: single("APPROVAL_EXPIRED", `approval ${stored.approvalId} expired at ${stored.content.expires_at} before the principal approved it`, x.base, fields) };
    case "approved": {
      // Only the reasons the principal saw and approved are cleared; anything new stays.
      const d = x.reevaluate(new Set(stored.content.reasons));
      await releaseStepUp(pool, req.agent_id, req.action.action_id, x.hash);
      return { kind: "approved", decision: d, approvalId: stored.approvalId };
    }
  }
}

/** After the approved request's verify: an ALLOW uses the approval (once). Returns `body`. */
export async function approvalUsed(pool: Pool, approvalId: string, body: VerifyResponse, at: Date): Promise<VerifyResponse> {
  if (body.verdict === "ALLOW") await markApprovalUsed(pool, approvalId, at);
  return body;
}

/** Public JWKs of the grant's principal, when the delegation names one. */
export function principalKeysOf(delegation: { delegation: { principal: { public_key?: unknown } } }): Record<string, unknown>[] {
  const k = delegation.delegation.principal.public_key;
  return typeof k === "object" && k !== null && !Array.isArray(k) ? [k as Record<string, unknown>] : [];
}

/**
 * True when `stored` is the STEP_UP an approval of this very request stored, now released so
 * that the request's new final answer (a DENY found before the approval is even consulted: a
 * budget spent meanwhile, a revocation) is stored in its place.
 */
export async function replacesApprovalStepUp(pool: Pool, stored: { requestHash: HashString; agentId: string; actionId: string; decision: Record<string, unknown> }, hash: HashString): Promise<boolean> {
  if (stored.requestHash !== hash || stored.decision.verdict !== "STEP_UP" || typeof stored.decision.approval_id !== "string") return false;
  await releaseStepUp(pool, stored.agentId, stored.actionId, hash);
  return true;
}
