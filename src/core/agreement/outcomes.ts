/**
 * The allowed moves of an action's outcome in the spend ledger, after the verified ALLOW:
 *
 *   allowed -> authorized -> settled
 *   allowed | authorized -> failed
 *
 * `settled` and `failed` are final; after a hold step (./holds.ts: captured, voided, expired,
 * refunded) none of these moves is allowed. A `failed` entry releases the action's amount from the
 * totals (the core counts only each action's latest entry; failed counts nothing). Asking for
 * an outcome the action already has is a replay: the existing entry is the answer and nothing
 * is appended. Pure.
 */
import type { LedgerOutcome } from "./types.js";

/** Outcomes recorded after the allowed one. */
export type LaterOutcome = "authorized" | "settled" | "failed";

/** Where each outcome may move next. */
export const NEXT_OUTCOMES: Readonly<Record<LedgerOutcome, readonly LaterOutcome[]>> = {
  allowed: ["authorized", "failed"],
  authorized: ["settled", "failed"],
  settled: [],
  failed: [],
  // Once a hold step (./holds.ts) is recorded, the seed's moves stop.
  captured: [],
  released: [],
  voided: [],
  expired: [],
  refunded: [],
};

/** What to do with a requested outcome, given the action's outcomes so far (in ledger order). */
export type OutcomeStep =
  | { kind: "append" }
  | { kind: "replay" }
  | { kind: "refused"; code: "ACTION_NOT_RECORDED" }
  | { kind: "refused"; code: "OUTCOME_NOT_ALLOWED"; current: LedgerOutcome };

/** Decides a requested outcome (see the module comment). */
export function outcomeStep(history: readonly LedgerOutcome[], requested: LaterOutcome): OutcomeStep {
  if (!history.includes("allowed")) return { kind: "refused", code: "ACTION_NOT_RECORDED" };
  if (history.includes(requested)) return { kind: "replay" };
  const current = history[history.length - 1] as LedgerOutcome;
  return NEXT_OUTCOMES[current].includes(requested) ? { kind: "append" } : { kind: "refused", code: "OUTCOME_NOT_ALLOWED", current };
}
