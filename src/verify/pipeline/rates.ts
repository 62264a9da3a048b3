/**
 * The rates a verify needs, fetched lazily: only when the action's currency differs from a
 * currency the evaluation compares it in (the candidate intents' currencies, and the
 * delegation scope's currency when the scope has a ceiling or a cumulative maximum), and then
 * once per such currency, all in parallel, for the UTC day of the decision (the service
 * clock). Never for the day of `proposed_at`: the agent chooses that, and with it it would
 * choose the rate (and make the source be asked about any day it likes).
 *
 * The engine's `rate` is synchronous, so the answers are collected first; a currency without
 * a rate stays unknown and the engine fails closed (CURRENCY_MISMATCH, never a guess).
 */
import type { Action, EvalContext, PreparedAgreement, PreparedDelegation } from "../../core/evaluate/index.js";
import type { Rate } from "../../core/money/index.js";
import { formatInstant } from "../../core/time/index.js";

/** Looks up units of `to` per one `from` on `day` (undefined when no rate is known). */
export type RateLookup = (from: string, to: string, day: string) => Promise<Rate | undefined>;

/** The currencies (other than the action's) the evaluation of `action` compares amounts in. */
export function currenciesNeeded(agreement: PreparedAgreement, delegation: PreparedDelegation, action: Action): string[] {
  const out = new Set<string>();
  const named = action.intent_id;
  for (const m of agreement.mandates) {
    if (named === undefined || m.mandate.intent_id === named) out.add(m.mandate.currency);
  }
  const scope = delegation.scope;
  if (scope.ceilingMinor !== undefined || scope.cumulativeMinor !== undefined) out.add(scope.scope.currency);
  out.delete(action.currency);
  return [...out].filter((c) => typeof c === "string" && /^[A-Z]{3}$/.test(c)).sort();
}

/** The engine's `rate` for `action` decided at `nowMs` (undefined when no conversion is needed). */
export async function ratesFor(
  agreement: PreparedAgreement,
  delegation: PreparedDelegation,
  action: Action,
  lookup: RateLookup,
  nowMs: number,
): Promise<EvalContext["rate"] | undefined> {
  const wanted = currenciesNeeded(agreement, delegation, action);
  if (wanted.length === 0) return undefined;
  const day = formatInstant(nowMs).slice(0, 10);
  const found = await Promise.all(wanted.map(async (to) => [to, await lookup(action.currency, to, day)] as const));
  const rates = new Map<string, Rate>();
  for (const [to, r] of found) if (r !== undefined) rates.set(to, r);
  const from = action.currency;
  return (f, t) => (f === from ? rates.get(t) : undefined);
}
