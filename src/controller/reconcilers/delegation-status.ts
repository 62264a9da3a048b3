/**
 * Status messages of a stored delegation, shared by both forms of a Delegation (a grant and a
 * payment mandate) and by the agreements bound to one: what verify enforces while a generation
 * is refused, and why a revoked one stays revoked (revoked by deletion says so).
 */
import type { StoredDelegation } from "../../store/index.js";
import type { DesiredCondition } from "../conditions.js";
import type { Refusal } from "../spec-errors.js";
import type { DelegationView } from "./delegation-checks.js";
import { DELETION_REVOKER } from "./finalize.js";

/** What verify enforces for a refused generation: the record stored before. */
export function inForce(stored: StoredDelegation, view: DelegationView): string {
  return `verify still answers with the record stored before: delegation ${stored.delegationId}, effective status ${view.effective}${suspendedNote(view)}`;
}

/** Why a suspended delegation is suspended and until when a time condition keeps it so (empty when not suspended). */
export function suspendedNote(view: DelegationView): string {
  if (view.effective !== "suspended" || view.suspended === undefined) return "";
  const until =
    view.nextChangeMs !== undefined && view.nextChangeMs < view.expiresAtMs
      ? `; verify answers DENY until ${new Date(view.nextChangeMs).toISOString()} at least`
      : "; verify answers DENY";
  return ` (${view.suspended}${until})`;
}

/** The Ready message of a delegation revoked by its own revocation (not a link's); `renewal` says what a new grant takes. */
export function revokedMessage(stored: StoredDelegation, renewal = "a new grant needs a new delegation_id"): string {
  const at = stored.revokedAt ? ` at ${stored.revokedAt.toISOString()}` : "";
  if (stored.revokedBy === DELETION_REVOKER) {
    return `delegation ${stored.delegationId} was revoked by deletion${at} (${stored.revokedReason ?? "its resource was deleted"}): deleting a resource revokes its grant for good, and re-applying the same manifest cannot restore it; ${renewal}`;
  }
  return `delegation ${stored.delegationId} is revoked by ${stored.revokedBy ?? "unknown"}${at}: ${stored.revokedReason ?? "no reason given"}; revocation is final, ${renewal}`;
}

/**
 * The Stored condition of a Delegation's generation: stored, or not (the first refusal's code),
 * saying that `keptWhat` (the record stored before) stays in force when there is one.
 */
export function storedCondition(
  generation: number | undefined,
  refusals: readonly Refusal[],
  refused: boolean,
  stored: StoredDelegation | undefined,
  keptWhat: string,
): DesiredCondition {
  return refused || !stored
    ? {
        type: "Stored",
        status: "False",
        reason: refusals[0]?.code ?? "NotStored",
        message: `generation ${generation ?? 0} is not stored${stored ? `; ${keptWhat} stays in force` : ""}`,
      }
    : { type: "Stored", status: "True", reason: "Stored", message: `stored as delegation ${stored.delegationId} (generation ${stored.generation})` };
}
