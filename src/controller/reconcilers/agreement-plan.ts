/**
 * The IntentAgreement reconciler's status decisions, pure (no I/O): the agreement's own effective
 * status, what verify enforces for the stored agreement under the delegation it is stored with
 * (that delegation's chain judged on its stored parents, as verify judges it),
 * and Ready, decided by `AGREEMENT_READINESS`, an ordered chain of policies (the first that
 * objects decides Ready False; none objecting is Ready True).
 */
import type { ReasonCode, PreparedAgreement } from "../../core/evaluate/index.js";
import type { StoredAncestor } from "../../core/delegation/index.js";
import type { StoredDelegation, AgreementRow } from "../../store/index.js";
import type { DesiredCondition } from "../conditions.js";
import { summary, type Refusal } from "../spec-errors.js";
import { delegationView } from "./delegation-checks.js";
import { revokedMessage } from "./delegation-status.js";
import { DELETION_REVOKER } from "./finalize.js";

/** The effective agreement status and the next instant it may change by itself. */
export function effectiveOf(p: PreparedAgreement, row: AgreementRow | undefined, now: number): { status: string; nextChangeMs?: number } {
  if (row?.revokedAt || row?.pushedRevocation || p.revocation === "valid" || p.agreement.status === "revoked") return { status: "revoked" };
  const expiries = p.mandates.map((m) => m.expiresAtMs);
  const allExpired = expiries.length > 0 && expiries.every((e) => e !== undefined && e <= now);
  if (p.agreement.status === "expired" || allExpired) return { status: "expired" };
  const future = [...expiries, ...p.mandates.map((m) => m.notBeforeMs)].filter((t): t is number => t !== undefined && Number.isFinite(t) && t > now);
  return future.length > 0 ? { status: p.agreement.status, nextChangeMs: Math.min(...future) } : { status: p.agreement.status };
}

/**
 * What verify enforces for a stored agreement, from its row and the delegation it is stored
 * with: revoked (its own revocation, or its delegation's) or expired (its delegation's), with
 * the reason code verify answers and why; else the agreement's own effective status.
 */
export function enforcedOf(
  row: AgreementRow,
  bound: StoredDelegation | undefined,
  prepared: PreparedAgreement | undefined,
  now: number,
  ancestors: readonly (StoredAncestor | undefined)[] = [],
): { status: string; code?: ReasonCode; why?: string } {
  const at = (d: Date | null) => (d ? ` at ${d.toISOString()}` : "");
  if (row.revokedAt || row.pushedRevocation) {
    const byDeletion = row.revokedBy === DELETION_REVOKER;
    const why = byDeletion
      ? `agreement revoked by deletion${at(row.revokedAt)} (${row.revokedReason ?? "its resource was deleted"}): deleting a resource revokes it for good, and re-applying the same manifest cannot restore it; a new agreement needs a new agreement_id`
      : `agreement revoked${at(row.revokedAt)}${row.revokedReason ? `: ${row.revokedReason}` : ""}; revocation is final, a new agreement needs a new agreement_id`;
    return { status: "revoked", code: prepared?.agreement.status === "revoked" ? undefined : "AGREEMENT_REVOKED", why };
  }
  if (bound?.revokedAt) {
    return {
      status: "revoked",
      code: "DELEGATION_REVOKED",
      why: `the delegation it is bound to, ${bound.delegationId}, is revoked${at(bound.revokedAt)}: ${revokedMessage(bound)}; verify answers DENY DELEGATION_REVOKED`,
    };
  }
  if (bound) {
    // Its chain as the stored parents give it (`ancestors`, in link order), as verify judges it.
    const chained = bound.record.delegation_chain.length > 0 ? { orgId: bound.orgId, ancestors } : undefined;
    const view = delegationView(bound.record, now, new Set(), chained);
    const link = view.chainFindings.find((f) => f.code === "CHAIN_LINK_REVOKED" || f.code === "CHAIN_LINK_EXPIRED");
    if (view.effective === "revoked" && link) {
      return {
        status: "revoked",
        code: link.code,
        why: `the delegation it is bound to, ${bound.delegationId}, is invalidated: ${link.message}; verify answers DENY ${link.code}`,
      };
    }
    if (view.effective === "expired") {
      return link
        ? {
            status: "expired",
            code: link.code,
            why: `the delegation it is bound to, ${bound.delegationId}, lapses with its chain: ${link.message}; verify answers DENY ${link.code}`,
          }
        : {
            status: "expired",
            code: "DELEGATION_EXPIRED",
            why: `the delegation it is bound to, ${bound.delegationId}, has expired; verify answers DENY DELEGATION_EXPIRED`,
          };
    }
  }
  const own = prepared ? effectiveOf(prepared, row, now).status : undefined;
  return own !== undefined ? { status: own } : { status: "active" };
}

/** What Ready of an agreement is judged on. */
export interface AgreementReadiness {
  refusals: readonly Refusal[];
  /** The note on what verify still answers with (empty when nothing is stored). */
  inForce: string;
  /** What verify enforces for the stored agreement, when one is stored. */
  enforced: { status: string; code?: ReasonCode; why?: string } | undefined;
  /** Why the agreement waits for its Delegation, when it does. */
  pending: string | undefined;
  /** This generation is stored. */
  stored: boolean;
  /** Its own effective status, when it validates. */
  effective: { status: string } | undefined;
  /** Signed, but SVC_LOG_SIGNING_SEED is unset. */
  noLog: boolean;
  /** The declared status (`spec.state`). */
  declared: string | undefined;
  agreementId: string;
  revokedReason: string | null;
}

/** An agreement readiness policy: the Ready=False it decides, or undefined when it does not object. */
export type AgreementReadinessPolicy = (r: AgreementReadiness) => DesiredCondition | undefined;

const notReady = (reason: DesiredCondition["reason"], message: string): DesiredCondition => ({ type: "Ready", status: "False", reason, message });

/** The agreement readiness policies, in order: the first that objects decides. */
export const AGREEMENT_READINESS: readonly AgreementReadinessPolicy[] = [
  // This generation is refused (the agreement stored before, if any, stays in force).
  (r) => (r.refusals.length > 0 ? notReady(r.refusals[0]?.code ?? "SPEC_INVALID", `${summary(r.refusals)}${r.inForce}`) : undefined),
  // Verify refuses the stored agreement (revoked, or its delegation revoked or expired).
  (r) => (r.enforced?.code ? notReady(r.enforced.code, r.enforced.why ?? "") : undefined),
  (r) => (r.pending !== undefined ? notReady("DelegationNotReady", `${r.pending}${r.inForce}`) : undefined),
  (r) => (!r.stored || !r.effective ? notReady("NotStored", "not stored") : undefined),
  (r) => (r.noLog ? notReady("LogNotConfigured", "stored, but SVC_LOG_SIGNING_SEED is unset, so its mandate hashes are not logged") : undefined),
  (r) =>
    r.effective?.status === "revoked" && r.declared !== "revoked"
      ? notReady("AGREEMENT_REVOKED", `agreement ${r.agreementId} is revoked${r.revokedReason ? `: ${r.revokedReason}` : ""}`)
      : undefined,
  (r) =>
    r.effective?.status === "expired" && r.declared !== "expired"
      ? notReady("INTENT_EXPIRED", "every mandate of the agreement has expired; a renewal is a new agreement")
      : undefined,
];

/** Ready of an agreement: the first objection of `policies`, else Ready True. */
export function agreementReadiness(r: AgreementReadiness, policies: readonly AgreementReadinessPolicy[] = AGREEMENT_READINESS): DesiredCondition {
  for (const p of policies) {
    const c = p(r);
    if (c) return c;
  }
  return {
    type: "Ready",
    status: "True",
    reason: "Reconciled",
    message: `stored as agreement ${r.agreementId}; effective status ${r.effective?.status ?? ""}`,
  };
}
