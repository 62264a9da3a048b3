/**
 * Which of the agent's live agreements a verify evaluates. Pure.
 *
 * Rules, in order:
 * 1. Only candidates of the caller's tenant count: an agreement stored for another
 *    organization (`org_id` set and different) is invisible; one without an org counts.
 * 2. `agreement_id` in the request: that candidate, or none.
 * 3. Otherwise the action's `intent_id`, when given, narrows to the candidates holding a live
 *    mandate with that intent id: exactly one is chosen; several are ambiguous; none is
 *    INTENT_NOT_FOUND (unless the agent has a single candidate: the engine then names it).
 * 4. Otherwise the only candidate; several are ambiguous (AGREEMENT_NOT_SELECTED).
 */
import type { VerifyCandidate } from "../caches/candidates.js";

/** The outcome of a selection. */
export type Selection =
  | { kind: "one"; candidate: VerifyCandidate }
  | { kind: "none" }
  | { kind: "ambiguous"; agreementIds: string[] }
  | { kind: "intent-not-found"; intentId: string; agreementIds: string[] };

/** Selects the candidate a verify evaluates (see the module rules). */
export function selectCandidate(all: readonly VerifyCandidate[], orgId: string, request: { agreementId?: string; intentId?: string }): Selection {
  const visible = all.filter((c) => c.orgId === null || c.orgId === orgId);
  if (request.agreementId !== undefined) {
    const c = visible.find((x) => x.agreementId === request.agreementId);
    return c ? { kind: "one", candidate: c } : { kind: "none" };
  }
  if (visible.length === 0) return { kind: "none" };
  const only = visible.length === 1 ? visible[0] : undefined;
  if (only) return { kind: "one", candidate: only };
  const ids = visible.map((c) => c.agreementId);
  const intentId = request.intentId;
  if (intentId === undefined) return { kind: "ambiguous", agreementIds: ids };
  const holding = visible.filter((c) => c.agreement.mandates.some((m) => m.mandate.intent_id === intentId));
  const picked = holding.length === 1 ? holding[0] : undefined;
  if (picked) return { kind: "one", candidate: picked };
  if (holding.length === 0) return { kind: "intent-not-found", intentId, agreementIds: ids };
  return { kind: "ambiguous", agreementIds: holding.map((c) => c.agreementId) };
}
