/**
 * The per-evaluation state the policies read: the action's amount parsed once, currency
 * conversion with the context's rates, and a findings collector.
 */
import { MoneyError, convertMinor, toMinor } from "../money/index.js";
import type { Finding, ReasonCode } from "./reasons.js";
import type { Action, EvalContext, PreparedAgreement, PreparedDelegation } from "./types.js";

export interface EvalState {
  readonly action: Action;
  readonly ctx: EvalContext;
  readonly delegation: PreparedDelegation;
  readonly agreement: PreparedAgreement | undefined;
  /** The action amount in minor units of its own currency, or undefined when unusable. */
  readonly amountMinor: bigint | undefined;
}

/** Collects findings; policies push into it. */
export class Findings {
  readonly list: Finding[] = [];
  add(code: ReasonCode, message: string): void {
    this.list.push({ code, message });
  }
  addAll(fs: readonly Finding[]): void {
    for (const f of fs) this.list.push(f);
  }
}

/** Parses the action amount in its own currency; undefined when unusable. */
export function actionMinor(action: Action): bigint | undefined {
  try {
    return toMinor(action.amount, action.currency);
  } catch (e) {
    if (e instanceof MoneyError) return undefined;
    throw e;
  }
}

/**
 * The action amount in minor units of `currency`: as is when the currencies match,
 * converted with the context's rate otherwise (rounded up), undefined when no rate is known.
 */
export function amountIn(s: EvalState, currency: string): bigint | undefined {
  if (s.amountMinor === undefined) return undefined;
  if (currency === s.action.currency) return s.amountMinor;
  const rate = s.ctx.rate?.(s.action.currency, currency);
  if (!rate) return undefined;
  return convertMinor(s.amountMinor, s.action.currency, currency, rate);
}
