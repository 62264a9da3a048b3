/**
 * The models' own account of an action's hold (independent of src/core/agreement/holds.ts),
 * shared by the money model and the adversary model: what a hold step by the payment party
 * must answer, and what it does to the hold when it is taken.
 */
import { expect } from "vitest";

/** An action's hold as the models count it. */
export interface Hold {
  captured: bigint;
  refunded: bigint;
  released: bigint;
  open: boolean;
  closedBy?: string;
  /** Steps by `<outcome>:<key>`: amount and whether final. */
  keys: Map<string, { amount: bigint; final: boolean }>;
}

/** A hold step as sent. */
export interface HoldStepSent {
  kind: "captured" | "voided" | "refunded";
  amountMinor: bigint;
  final: boolean;
  key: string;
}

/** What a step did in the model. */
export type HoldStepEffect = "replayed" | "conflict" | "refused" | "taken" | "restored";

/**
 * Checks the service's answer `r` to `step` on the held action `x` against the model, and
 * applies a taken step to `x.hold` and `x.outcomes` (a refund releases budget only when
 * `restores`). The caller has already checked that `x` was allowed.
 */
export function expectHoldStep(
  step: HoldStepSent,
  x: { amountMinor: bigint; outcomes: string[]; hold: Hold },
  r: { status: number; body: Record<string, unknown> },
  context: string,
  restores: boolean,
): HoldStepEffect {
  const h = x.hold;
  const seen = h.keys.get(`${step.kind}:${step.key}`);
  if (step.kind === "voided" && h.closedBy === "voided") {
    expect(r.body.replayed, context).toBe(true);
    return "replayed";
  }
  if (seen) {
    // The same step again answers what it appended; another body under its key is STEP_CONFLICT.
    const same = seen.amount === step.amountMinor && (step.kind !== "captured" || seen.final || !step.final);
    expect(r.status, context).toBe(same ? 200 : 409);
    if (same) {
      expect(r.body.replayed, context).toBe(true);
      return "replayed";
    }
    expect(String(r.body.error), context).toContain("idempotency_key was already used");
    return "conflict";
  }
  const closedOrFailed = step.kind === "refunded" ? h.closedBy === "failed" || h.captured === 0n : !h.open;
  const over =
    (step.kind === "captured" && h.captured + step.amountMinor > x.amountMinor) || (step.kind === "refunded" && h.refunded + step.amountMinor > h.captured);
  if (closedOrFailed || over) {
    expect(r.status, context).toBe(409);
    return "refused";
  }
  expect(r.status, context).toBe(200);
  expect(r.body.replayed, context).toBe(false);
  if (step.kind === "captured") {
    h.captured += step.amountMinor;
    const final = step.final || h.captured === x.amountMinor;
    h.keys.set(`captured:${step.key}`, { amount: step.amountMinor, final });
    x.outcomes.push("captured");
    if (final) {
      h.open = false;
      h.closedBy = "captured";
      const rest = x.amountMinor - h.captured;
      if (rest > 0n) {
        h.released += rest;
        x.outcomes.push("released");
      }
    }
  } else if (step.kind === "voided") {
    h.released += x.amountMinor - h.captured;
    h.open = false;
    h.closedBy = "voided";
    x.outcomes.push("voided");
  } else {
    h.refunded += step.amountMinor;
    h.keys.set(`refunded:${step.key}`, { amount: step.amountMinor, final: false });
    x.outcomes.push("refunded");
    if (restores) {
      h.released += step.amountMinor;
      x.outcomes.push("released");
      return "restored";
    }
  }
  expect(h.captured <= x.amountMinor && h.refunded <= h.captured, context).toBe(true);
  return "taken";
}
