/**
 * Intent distance: how far an action departs from the structured constraints its intent
 * declares. Deterministic and explainable:
 *
 * - The dimensions are `categories`, `merchants` and `items`. A dimension counts only when the
 *   intent declares it (a non-empty list). Values compare case-insensitively after trimming.
 * - A declared dimension is a miss when the action states a value outside the list. An action
 *   that states no value is not measured on that dimension, except `merchants`: every payment
 *   has a payee, so an intent with a merchant list and an action naming none is a miss.
 * - distance = number of misses. 0: nothing; 1: INTENT_DRIFT (STEP_UP); 2 or more:
 *   INTENT_MISMATCH (DENY). The message lists each miss.
 * - Free text (`purpose`, `natural_language`) is never measured: it alone never blocks.
 */
import type { EvalState, Findings } from "../state.js";
import type { PreparedMandate } from "../types.js";

const norm = (v: string) => v.trim().toLowerCase();

function miss(declared: readonly string[] | undefined, value: string | undefined, name: string, required: boolean): string | undefined {
  if (!declared || declared.length === 0) return undefined;
  if (value === undefined) return required ? `no ${name} named (intent allows ${declared.join(", ")})` : undefined;
  const v = norm(value);
  for (const d of declared) if (norm(d) === v) return undefined;
  return `${name} "${value}" is not among ${declared.join(", ")}`;
}

export function intentDistance(s: EvalState, m: PreparedMandate, out: Findings): void {
  const { mandate } = m;
  const misses: string[] = [];
  const c = miss(mandate.categories, s.action.category, "category", false);
  if (c) misses.push(c);
  const mer = miss(mandate.merchants, s.action.merchant, "merchant", true);
  if (mer) misses.push(mer);
  const it = miss(mandate.items, s.action.item, "item", false);
  if (it) misses.push(it);
  if (misses.length === 0) return;
  const text = `intent distance ${misses.length}: ${misses.join("; ")}`;
  out.add(misses.length === 1 ? "INTENT_DRIFT" : "INTENT_MISMATCH", text);
}
