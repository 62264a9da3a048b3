/**
 * HUMAN_APPROVAL_MISSING and RECONFIRMATION_OVERDUE at evaluation time: the approval rule of
 * standing and high-privilege grants (src/core/delegation/approval.ts).
 */
import { preparedPrivilege, type PreparedDelegation } from "../delegation/index.js";
import { formatInstant, parseInstant } from "../time/index.js";
import type { Finding } from "./reasons.js";
import type { EvalContext } from "./types.js";

/** Why the approval does not count, or its approval time when it does. */
function approvalState(prepared: PreparedDelegation): { problem: string } | { approvedAtMs: number } {
  const a: unknown = prepared.delegation.approval;
  if (a === undefined) return { problem: "carries no approval" };
  if (typeof a !== "object" || a === null) return { problem: "carries an approval that is not an object" };
  const o = a as Record<string, unknown>;
  if (o.type !== "HUMAN_APPROVAL") return { problem: `carries approval of type ${JSON.stringify(o.type)}, not HUMAN_APPROVAL` };
  if (typeof o.approved_by !== "string" || o.approved_by.length === 0) return { problem: "carries a HUMAN_APPROVAL that names no approver" };
  const at = parseInstant(o.approved_at);
  if (at === undefined) return { problem: `carries a HUMAN_APPROVAL with an unparseable approved_at ${JSON.stringify(o.approved_at)}` };
  if (at > prepared.grantedAtMs) {
    return { problem: `was approved at ${String(o.approved_at)}, after it was granted at ${String(prepared.delegation.granted_at)}` };
  }
  return { approvedAtMs: at };
}

/**
 * HUMAN_APPROVAL_MISSING and RECONFIRMATION_OVERDUE for standing and high-privilege grants;
 * empty for standard grants.
 */
export function evaluateApproval(prepared: PreparedDelegation, ctx: EvalContext): Finding[] {
  const privilege = preparedPrivilege(prepared);
  if (privilege === "standard") return [];
  const out: Finding[] = [];
  const state = approvalState(prepared);
  if ("problem" in state) {
    out.push({ code: "HUMAN_APPROVAL_MISSING", message: `this ${privilege} delegation ${state.problem}` });
  }
  let last = "approvedAtMs" in state ? state.approvedAtMs : prepared.grantedAtMs;
  const re = prepared.reconfirmedAtMs;
  if (re !== undefined && re <= ctx.now && re > last) last = re;
  const age = ctx.now - last;
  if (age > ctx.policy.reconfirmEveryMs) {
    const days = Math.floor(age / 86_400_000);
    const every = Math.floor(ctx.policy.reconfirmEveryMs / 86_400_000);
    out.push({
      code: "RECONFIRMATION_OVERDUE",
      message: `this ${privilege} delegation was last confirmed at ${formatInstant(last)} (${days} days ago); it must be re-confirmed every ${every} days`,
    });
  }
  return out;
}
