/**
 * The approvals step of verify (issue 32; docs/reference/approvals.md): what a STEP_UP that the
 * principal can clear becomes: a stage between decide and commit (./verify-action.ts), run only
 * for a STEP_UP and only when the deps carry `approvals` (the data plane builds them at start-up;
 * without them a STEP_UP is answered as before).
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
import { type ReasonCode } from "../core/evaluate/index.js";
import {
  findApprovalOfAction,
  markApprovalUsed,
  newApprovalId,
  openApproval,
  principalOfAgent,
  releaseStepUp,
  type StoredApproval,
  expandFanouts,
} from "../store/index.js";
import type { PreparedDelegationWithProblems } from "../core/delegation/index.js";
import type { VerifyCandidate } from "./caches/candidates.js";
import { reusedError } from "./commit/decision-log.js";
import { refusalAnswer, refusalOf, type Decided, type Question } from "./pipeline/decide.js";
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
  | { kind: "approved"; cleared: ReadonlySet<ReasonCode>; approvalId: string };

/** The verify facts the step reads. */
export interface ApprovalInput {
  pool: Pool;
  now: Date;
  options: ApprovalOptions;
  orgId: string;
  req: VerifyRequest;
  hash: HashString;
  agreementId: string;
  /** The STEP_UP as decided. */
  decision: VerifyResponse;
  base: Pick<VerifyResponse, "agent_id" | "action_id" | "agreement_id">;
  /** Public JWKs of the grant's principal (may sign a decision with `writ approval sign`). */
  principalKeys: Record<string, unknown>[];
}

/** The STEP_UP as evaluated (its reasons unchanged) with the approval's members. */
function pendingAnswer(x: ApprovalInput, fields: Partial<VerifyResponse>): VerifyResponse {
  return { ...x.decision, ...x.base, ...fields };
}

function approvalFields(a: Pick<StoredApproval, "approvalId" | "content">, status: string, url: string): Partial<VerifyResponse> {
  return {
    approval_id: a.approvalId,
    approval_url: url,
    approval_status: status,
    approval_expires_at: a.content.expires_at,
    confirmation_text: a.content.confirmation_text,
  };
}

function single(code: ReasonCode, message: string, base: ApprovalInput["base"], extra: Partial<VerifyResponse>): VerifyResponse {
  return { ...refusalAnswer(code, message, base), ...extra };
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
      details: {
        approval_id: approvalId,
        approval_url: x.options.urlOf(approvalId),
        confirmation_text: content.confirmation_text,
        expires_at: content.expires_at,
        content,
      },
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
      return {
        kind: "settle",
        body: single("APPROVAL_DECLINED", `the principal declined approval ${stored.approvalId} at ${stored.decidedAt?.toISOString() ?? ""}`, x.base, fields),
      };
    case "expired":
      await releaseStepUp(pool, req.agent_id, req.action.action_id, x.hash);
      return {
        kind: "settle",
        body: single(
          "APPROVAL_EXPIRED",
          `approval ${stored.approvalId} expired at ${stored.content.expires_at} before the principal approved it`,
          x.base,
          fields,
        ),
      };
    case "approved": {
      // Only the reasons the principal saw and approved are cleared; anything new stays.
      await releaseStepUp(pool, req.agent_id, req.action.action_id, x.hash);
      return { kind: "approved", cleared: new Set(stored.content.reasons as ReasonCode[]), approvalId: stored.approvalId };
    }
  }
}

/** Public JWKs of the grant's principal, when the delegation names one. */
function principalKeysOf(delegation: PreparedDelegationWithProblems): Record<string, unknown>[] {
  const k = delegation.delegation.principal.public_key;
  return typeof k === "object" && k !== null && !Array.isArray(k) ? [k as unknown as Record<string, unknown>] : [];
}

/**
 * True when `stored` is the STEP_UP an approval of this very request stored, now released so
 * that the request's new final answer (a DENY found before the approval is even consulted: a
 * budget spent meanwhile, a revocation) is stored in its place.
 */
export async function replacesApprovalStepUp(
  pool: Pool,
  stored: { requestHash: HashString; agentId: string; actionId: string; decision: Record<string, unknown> },
  hash: HashString,
): Promise<boolean> {
  if (stored.requestHash !== hash || stored.decision.verdict !== "STEP_UP" || typeof stored.decision.approval_id !== "string") return false;
  await releaseStepUp(pool, stored.agentId, stored.actionId, hash);
  return true;
}

/** The approvals stage of verify (see the module comment), built once at start-up. */
export class VerifyApprovals {
  constructor(
    private readonly pool: Pool,
    private readonly options: ApprovalOptions,
  ) {}

  /** True when the action has an approval of this very request: its retry keeps the proposed_at checked when it was opened. */
  async isRetry(q: Question): Promise<boolean> {
    return (await findApprovalOfAction(this.pool, q.agentId, q.actionId))?.requestHash === q.hash;
  }

  /**
   * What the STEP_UP `decided` of candidate `c` becomes, committed with `commit`; `rejudge`
   * decides again with the approved reasons cleared.
   */
  async settle(
    q: Question,
    decided: Extract<Decided, { answer: VerifyResponse }>,
    c: VerifyCandidate,
    delegation: PreparedDelegationWithProblems,
    rejudge: (cleared: ReadonlySet<ReasonCode>) => Decided,
    commit: (d: Decided) => Promise<VerifyResponse>,
  ): Promise<VerifyResponse> {
    const base = { agent_id: q.agentId, action_id: q.actionId, agreement_id: c.agreementId };
    const step = await approvalStep({
      pool: this.pool,
      now: q.now,
      options: this.options,
      orgId: q.orgId,
      req: q.req,
      hash: q.hash,
      agreementId: c.agreementId,
      decision: decided.answer,
      base,
      principalKeys: principalKeysOf(delegation),
    });
    if (!step) return commit(decided);
    switch (step.kind) {
      case "answer":
        return commit({ answer: step.body, effect: { kind: "none" } });
      case "settle":
        return commit(refusalOf(step.body));
      case "reused":
        throw reusedError(q);
      case "approved": {
        const again = rejudge(step.cleared);
        if ("error" in again) return commit(again);
        const answer = { ...again.answer, approval_id: step.approvalId };
        const e = again.effect;
        // The ALLOW stored with its spend names the approval it used.
        const effect =
          e.kind === "spend" && e.spend.decision
            ? { ...e, spend: { ...e.spend, decision: { ...e.spend.decision, body: { ...e.spend.decision.body, approval_id: step.approvalId } } } }
            : e;
        const out = await commit({ answer, effect });
        if (out.verdict === "ALLOW") await markApprovalUsed(this.pool, step.approvalId, q.now);
        return out;
      }
    }
  }

  /** See replacesApprovalStepUp. */
  replacesStepUp(
    stored: { requestHash: HashString; agentId: string; actionId: string; decision: Record<string, unknown> },
    hash: HashString,
  ): Promise<boolean> {
    return replacesApprovalStepUp(this.pool, stored, hash);
  }
}
