/**
 * parent_limits: the parent set every live intent stays inside.
 *
 * Promises: with `parent_limits`, every mandate is in the parent's currency; each present
 * `maximum_amount` is at most the parent's `maximum_amount`; each present `cumulative_maximum`
 * is at most the parent's `cumulative_maximum`, and so is the sum of those slices. All
 * comparisons are in integer minor units. A limit the parent leaves out bounds nothing; a
 * limit a mandate leaves out is bounded by the parent's at evaluation time. An amount not
 * usable in its currency is a problem. Never throws.
 */
import { toMinor } from "../money/index.js";
import type { IntentAgreement } from "./types.js";

/** Minor units of an optional amount: undefined when absent, a problem sentence when unusable. */
export function optionalMinor(amount: unknown, currency: unknown, what: string): bigint | undefined | { problem: string } {
  if (amount === undefined) return undefined;
  try {
    if (typeof amount !== "number" || typeof currency !== "string") throw new TypeError("not a number");
    return toMinor(amount, currency);
  } catch {
    return { problem: `${what} ${String(amount)} is not a usable amount in ${String(currency)}` };
  }
}

function problemOf(agreement: IntentAgreement): string | undefined {
  const parent = agreement.parent_limits;
  if (parent === undefined) return undefined;
  if (typeof parent !== "object" || parent === null) return "parent_limits is not an object";
  const pMax = optionalMinor(parent.maximum_amount, parent.currency, "parent_limits.maximum_amount");
  if (typeof pMax === "object") return pMax.problem;
  const pCum = optionalMinor(parent.cumulative_maximum, parent.currency, "parent_limits.cumulative_maximum");
  if (typeof pCum === "object") return pCum.problem;
  let slices = 0n;
  for (const m of agreement.mandates) {
    const id = JSON.stringify(m.intent_id);
    if (m.currency !== parent.currency) return `intent ${id} is in ${String(m.currency)} but parent_limits is in ${String(parent.currency)}`;
    const max = optionalMinor(m.maximum_amount, m.currency, `intent ${id}'s maximum_amount`);
    if (typeof max === "object") return max.problem;
    const cum = optionalMinor(m.cumulative_maximum, m.currency, `intent ${id}'s cumulative_maximum`);
    if (typeof cum === "object") return cum.problem;
    if (pMax !== undefined && max !== undefined && max > pMax) {
      return `intent ${id}'s maximum_amount ${String(m.maximum_amount)} is above parent_limits.maximum_amount ${String(parent.maximum_amount)}`;
    }
    if (pCum !== undefined && cum !== undefined && cum > pCum) {
      return `intent ${id}'s cumulative_maximum ${String(m.cumulative_maximum)} is above parent_limits.cumulative_maximum ${String(parent.cumulative_maximum)}`;
    }
    slices += cum ?? 0n;
  }
  if (pCum !== undefined && slices > pCum) {
    return `the intents' cumulative_maximum slices add up to more than parent_limits.cumulative_maximum ${String(parent.cumulative_maximum)}`;
  }
  return undefined;
}

/** The first way the agreement's mandates leave its `parent_limits`, or undefined. */
export function parentLimitsProblem(agreement: IntentAgreement): string | undefined {
  try {
    return problemOf(agreement);
  } catch {
    return "parent_limits cannot be checked";
  }
}
