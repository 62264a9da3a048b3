/**
 * Holds, captures, voids, expiries and refunds of an allowed action (docs/verify.md, "Holds,
 * captures and refunds"; docs/formats.md, "Ledger"). An ALLOW is a hold of its amount on every
 * budget; the payment side then records:
 *
 *   captured (amount, final?)  several partial captures, never more than the hold in all; a
 *                              final one (or one that reaches the hold) closes it, and the rest
 *                              of the hold is released exactly (a `released` entry, cause capture)
 *   voided                     closes the hold, releasing what is not captured
 *   expired                    (the service) the same, for a hold not captured in time
 *   refunded (amount)          after a capture, never more than captured in all; gives budget
 *                              back only when the mandate says so (`refunds_restore_budget`): a
 *                              `released` entry, cause refund, of the same amount
 *
 * What counts against the budgets for an action is its hold minus everything released
 * (`countedOf`); the legacy outcomes keep their meaning (allowed -> authorized -> settled,
 * failed releases the whole amount). Amounts are integer minor units. Pure.
 */
import type { LedgerOutcome } from "./types.js";

/** The outcomes this module adds to the ledger (a documented extension: docs/formats.md). */
export const HOLD_OUTCOMES = ["captured", "released", "voided", "expired", "refunded"] as const;
export type HoldOutcome = (typeof HOLD_OUTCOMES)[number];

/** Outcomes that release budget by themselves (their `amount` is what they give back). */
const RELEASING: ReadonlySet<string> = new Set(["released", "voided", "expired"]);

/** What a ledger's entries say about one action, in minor units. */
export interface ActionState {
  /** The amount in force (the hold): the latest amount a legacy entry (allowed, authorized, settled) carried. */
  hold: bigint;
  captured: bigint;
  refunded: bigint;
  /** Everything released by released, voided and expired entries (a `failed` is `failed`). */
  released: bigint;
  /** Refund amounts given back so far (released with cause refund). */
  restored: bigint;
  /** Whether the hold still takes captures, voids and expiry. */
  open: boolean;
  failed: boolean;
  /** The latest outcome. */
  last: LedgerOutcome | undefined;
  /** The outcome that closed the hold, when closed (settled, failed, captured, voided or expired). */
  closedBy?: LedgerOutcome;
  /** Whether any entry of this module's outcomes was appended (the legacy moves then stop). */
  stepped: boolean;
  /** Remainder a final capture still has to release (the next entry must be that `released`). */
  pendingRelease: bigint;
  /** Captures and refunds by their idempotency key: `captured:<key>` / `refunded:<key>`. */
  steps: Map<string, { amount: bigint; final: boolean }>;
}

/** A new state for an action whose allowed entry held `hold`. */
export function emptyActionState(): ActionState {
  return {
    hold: 0n,
    captured: 0n,
    refunded: 0n,
    released: 0n,
    restored: 0n,
    open: false,
    failed: false,
    last: undefined,
    stepped: false,
    pendingRelease: 0n,
    steps: new Map(),
  };
}

/** What an action counts against its budgets now. */
export function countedOf(s: ActionState): bigint {
  if (s.failed) return 0n;
  const c = s.hold - s.released;
  return c > 0n ? c : 0n;
}

/** An entry as the state machine reads it: its outcome, amount in minor units (undefined when absent), final and cause. */
export interface StepEntry {
  outcome: LedgerOutcome;
  amountMinor: bigint | undefined;
  final?: boolean;
  cause?: "capture" | "refund";
  idempotencyKey?: string;
}

/**
 * Applies one entry of the action to `s` (mutated) and returns a problem when the entry is not a
 * move the rules allow (what an independent verifier checks), else undefined.
 */
export function applyEntry(s: ActionState, e: StepEntry): string | undefined {
  const amt = e.amountMinor;
  const need = (): string | undefined => (amt === undefined ? `a ${e.outcome} entry needs an amount` : undefined);
  if (s.pendingRelease > 0n && !(e.outcome === "released" && e.cause === "capture")) {
    return `a final capture must be followed by the release of the rest of the hold`;
  }
  switch (e.outcome) {
    case "allowed":
    case "authorized":
    case "settled":
    case "failed": {
      if (s.stepped && e.outcome !== "allowed") return `outcome ${e.outcome} cannot follow ${String(s.last)}`;
      if (amt !== undefined) s.hold = amt;
      if (e.outcome === "allowed") s.open = true;
      if (e.outcome === "settled") {
        s.open = false;
        s.closedBy = "settled";
        s.captured = s.hold;
      }
      if (e.outcome === "failed") {
        s.open = false;
        s.closedBy = "failed";
        s.failed = true;
      }
      break;
    }
    case "captured": {
      const p = need();
      if (p) return p;
      if (!s.open) return `outcome captured cannot follow ${String(s.last)}`;
      if (s.captured + (amt as bigint) > s.hold) return `captures exceed the hold`;
      s.captured += amt as bigint;
      if (e.idempotencyKey !== undefined) s.steps.set(`captured:${e.idempotencyKey}`, { amount: amt as bigint, final: e.final === true });
      if (e.final === true || s.captured === s.hold) {
        if (e.final !== true) return `a capture that reaches the hold is final`;
        s.open = false;
        s.closedBy = "captured";
        s.pendingRelease = s.hold - s.captured;
      }
      break;
    }
    case "released": {
      const p = need();
      if (p) return p;
      if (e.cause === "capture") {
        if (s.pendingRelease === 0n || amt !== s.pendingRelease) return `a release after a final capture must release exactly the rest of the hold`;
        s.pendingRelease = 0n;
      } else if (e.cause === "refund") {
        if (s.restored + (amt as bigint) > s.refunded) return `refund releases exceed the refunds`;
        s.restored += amt as bigint;
      } else return `a released entry needs a cause (capture or refund)`;
      s.released += amt as bigint;
      break;
    }
    case "voided":
    case "expired": {
      const p = need();
      if (p) return p;
      if (!s.open) return `outcome ${e.outcome} cannot follow ${String(s.last)}`;
      if (amt !== s.hold - s.captured) return `a ${e.outcome} entry must release exactly the rest of the hold`;
      s.open = false;
      s.closedBy = e.outcome;
      s.released += amt;
      break;
    }
    case "refunded": {
      const p = need();
      if (p) return p;
      if (s.failed) return `outcome refunded cannot follow failed`;
      if (s.refunded + (amt as bigint) > s.captured) return `refunds exceed the captures`;
      s.refunded += amt as bigint;
      if (e.idempotencyKey !== undefined) s.steps.set(`refunded:${e.idempotencyKey}`, { amount: amt as bigint, final: false });
      break;
    }
    default:
      return `unknown outcome ${JSON.stringify(e.outcome)}`;
  }
  if (HOLD_OUTCOMES.includes(e.outcome as HoldOutcome)) s.stepped = true;
  s.last = e.outcome;
  return undefined;
}

/** Whether an outcome releases budget by itself. */
export const releasesBudget = (o: string): boolean => RELEASING.has(o);

/** A step the payment side (or the service, for expired) asks for. */
export type HoldRequest =
  | { kind: "captured"; key: string; amountMinor: bigint; final: boolean }
  | { kind: "voided" }
  | { kind: "expired" }
  | { kind: "refunded"; key: string; amountMinor: bigint; restore: boolean };

/** An entry to append, in order. */
export interface NewStep {
  outcome: HoldOutcome;
  amountMinor: bigint;
  final?: true;
  cause?: "capture" | "refund";
  /** The entry's idempotency key: the request's key, or the action id for voided and expired. */
  key: string | undefined;
}

/** The refusals of `holdStep` (each an error of the registry: src/api/errors.ts). */
export type HoldRefusal =
  | { code: "OUTCOME_NOT_ALLOWED"; current: LedgerOutcome }
  | { code: "CAPTURE_EXCEEDS_HOLD"; heldMinor: bigint; capturedMinor: bigint }
  | { code: "REFUND_EXCEEDS_CAPTURED"; capturedMinor: bigint; refundedMinor: bigint }
  | { code: "STEP_CONFLICT" };

/** What to do with a request. */
export type HoldDecision =
  | { kind: "append"; steps: NewStep[]; /** Budget given back by the steps (minor units). */ releaseMinor: bigint }
  /** The request was recorded before: `outcome` and `key` name the entries that answer it. */
  | { kind: "replay"; outcome: HoldOutcome; key: string | undefined }
  | ({ kind: "refused" } & HoldRefusal);

/** Decides a request against the action's state (see the module comment). */
export function holdStep(s: ActionState, r: HoldRequest): HoldDecision {
  const notAllowed = (): HoldDecision => ({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: s.closedBy ?? s.last ?? "allowed" });
  switch (r.kind) {
    case "captured": {
      const seen = s.steps.get(`captured:${r.key}`);
      if (seen)
        return seen.amount === r.amountMinor && (seen.final || !r.final)
          ? { kind: "replay", outcome: "captured", key: r.key }
          : { kind: "refused", code: "STEP_CONFLICT" };
      if (!s.open) return notAllowed();
      if (r.amountMinor <= 0n && !r.final) return { kind: "refused", code: "CAPTURE_EXCEEDS_HOLD", heldMinor: s.hold, capturedMinor: s.captured };
      const after = s.captured + r.amountMinor;
      if (after > s.hold) return { kind: "refused", code: "CAPTURE_EXCEEDS_HOLD", heldMinor: s.hold, capturedMinor: s.captured };
      const final = r.final || after === s.hold;
      const steps: NewStep[] = [{ outcome: "captured", amountMinor: r.amountMinor, ...(final ? { final: true as const } : {}), key: r.key }];
      const rest = s.hold - after;
      if (final && rest > 0n) steps.push({ outcome: "released", amountMinor: rest, cause: "capture", key: r.key });
      return { kind: "append", steps, releaseMinor: final ? rest : 0n };
    }
    case "voided":
    case "expired": {
      if (s.closedBy === r.kind) return { kind: "replay", outcome: r.kind, key: undefined };
      if (!s.open) return notAllowed();
      const rest = s.hold - s.captured;
      return { kind: "append", steps: [{ outcome: r.kind, amountMinor: rest, key: undefined }], releaseMinor: rest };
    }
    case "refunded": {
      const seen = s.steps.get(`refunded:${r.key}`);
      if (seen) return seen.amount === r.amountMinor ? { kind: "replay", outcome: "refunded", key: r.key } : { kind: "refused", code: "STEP_CONFLICT" };
      if (s.failed || s.captured === 0n) return notAllowed();
      if (r.amountMinor <= 0n || s.refunded + r.amountMinor > s.captured)
        return { kind: "refused", code: "REFUND_EXCEEDS_CAPTURED", capturedMinor: s.captured, refundedMinor: s.refunded };
      const steps: NewStep[] = [{ outcome: "refunded", amountMinor: r.amountMinor, key: r.key }];
      if (r.restore) steps.push({ outcome: "released", amountMinor: r.amountMinor, cause: "refund", key: r.key });
      return { kind: "append", steps, releaseMinor: r.restore ? r.amountMinor : 0n };
    }
  }
}

/** The state of one action from its entries in ledger order; `problem` is the first move the rules refuse. */
export function actionState(entries: readonly StepEntry[]): { state: ActionState; problem?: string } {
  const s = emptyActionState();
  for (const e of entries) {
    const problem = applyEntry(s, e);
    if (problem !== undefined) return { state: s, problem };
  }
  return { state: s };
}
