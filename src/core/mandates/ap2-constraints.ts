/**
 * Reads the `constraints` array of an AP2 open payment mandate into typed facts, refusing
 * anything it cannot honour. Every constraint type is either mapped or refused with an
 * Ap2ImportError naming it; a constraint is never silently dropped. Each type may appear at
 * most once, and unknown members inside a constraint are refused (they could narrow it).
 *
 * - `payment.amount_range`: `max` in integer minor units; `min` above 0 is refused (a scope
 *   has no minimum amount).
 * - `payment.budget`: `max` is a major-unit number (the schema types it `number`; the AP2
 *   reference SDK multiplies it by 100), converted exactly; more decimals than the currency
 *   has are refused.
 * - `payment.allowed_payees`: merchant `id`s.
 * - `payment.execution_date`: RFC 3339 date-times, or dates read as UTC days.
 * - `payment.agent_recurrence`: a frequency (ON_DEMAND, DAILY, WEEKLY, BIWEEKLY, MONTHLY,
 *   QUARTERLY, ANNUALLY) and `max_occurrences`, mapped by ./ap2.ts to limits per period.
 * - `payment.reference`: the checkout digest the payment is bound to.
 * - `payment.allowed_payment_instruments`, `payment.allowed_pisps` and any other type: refused.
 */
import { MoneyError, isCurrency, toMinor } from "../money/index.js";
import { parseInstant } from "../time/index.js";
import { Ap2ImportError } from "./ap2-errors.js";

/** What the constraints say, typed. Amounts in minor units. */
export interface Ap2Constraints {
  amountRange?: { currency: string; maxMinor: bigint };
  budget?: { currency: string; maxMinor: bigint };
  payees?: string[];
  notBeforeMs?: number;
  notAfterMs?: number;
  recurrence?: { frequency: Ap2Frequency; maxOccurrences?: number };
  /** The checkout digest (`payment.reference`), required by the schema. */
  reference: string;
}

/** Known AP2 constraint types Writ refuses, and why. */
const KNOWN_UNSUPPORTED: Record<string, string> = {
  "payment.allowed_payment_instruments": "actions evaluated by Writ carry no payment instrument",
  "payment.allowed_pisps": "actions evaluated by Writ carry no payment initiation service provider",
};

const MEMBERS: Record<string, readonly string[]> = {
  "payment.amount_range": ["type", "currency", "max", "min"],
  "payment.budget": ["type", "currency", "max"],
  "payment.allowed_payees": ["type", "allowed"],
  "payment.execution_date": ["type", "not_before", "not_after"],
  "payment.agent_recurrence": ["type", "frequency", "max_occurrences"],
  "payment.reference": ["type", "conditional_transaction_id"],
};
const FREQUENCIES = ["ON_DEMAND", "DAILY", "WEEKLY", "BIWEEKLY", "MONTHLY", "QUARTERLY", "ANNUALLY"] as const;
/** An AP2 `agent_recurrence` frequency. */
export type Ap2Frequency = (typeof FREQUENCIES)[number];
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** True for a plain JSON object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True when a value is an SD-JWT array-element digest `{"...": digest}`. */
export function isUndisclosedElement(v: unknown): boolean {
  return isRecord(v) && "..." in v;
}

function invalid(type: string, why: string): Ap2ImportError {
  return new Ap2ImportError("CONSTRAINT_INVALID", `${type}: ${why}`, type);
}

function currencyOf(c: Record<string, unknown>, type: string): string {
  if (!isCurrency(c.currency)) throw invalid(type, `currency ${JSON.stringify(c.currency)} is not an ISO 4217 code`);
  return c.currency;
}

/** Epoch ms of a date-time, or of a date's UTC midnight (`endOfDay`: the next midnight). */
function executionInstant(v: unknown, field: string, endOfDay: boolean): number {
  const t = parseInstant(v);
  if (t !== undefined) return t;
  const m = typeof v === "string" ? DATE_RE.exec(v) : null;
  if (m) {
    const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (new Date(ms).toISOString().slice(0, 10) === v) return endOfDay ? ms + DAY_MS : ms;
  }
  throw invalid("payment.execution_date", `${field} ${JSON.stringify(v)} is neither an RFC 3339 date-time nor a date`);
}

function readAmountRange(c: Record<string, unknown>, out: Partial<Ap2Constraints>): void {
  const type = "payment.amount_range";
  const currency = currencyOf(c, type);
  if (!Number.isSafeInteger(c.max) || (c.max as number) < 0) throw invalid(type, "max must be a non-negative integer of minor units");
  if (c.min !== undefined) {
    if (!Number.isSafeInteger(c.min) || (c.min as number) < 0) throw invalid(type, "min must be a non-negative integer of minor units");
    if ((c.min as number) > (c.max as number)) throw new Ap2ImportError("UNSATISFIABLE", `${type}: min ${String(c.min)} is above max ${String(c.max)}`, type);
    if ((c.min as number) > 0) {
      throw new Ap2ImportError("CONSTRAINT_UNENFORCEABLE", `${type}: min ${String(c.min)} cannot be enforced (a delegation scope has no minimum amount)`, type);
    }
  }
  out.amountRange = { currency, maxMinor: BigInt(c.max as number) };
}

function readBudget(c: Record<string, unknown>, out: Partial<Ap2Constraints>): void {
  const type = "payment.budget";
  const currency = currencyOf(c, type);
  if (typeof c.max !== "number") throw invalid(type, "max must be a number (major units)");
  try {
    out.budget = { currency, maxMinor: toMinor(c.max, currency) };
  } catch (e) {
    if (e instanceof MoneyError) throw invalid(type, e.message);
    throw e;
  }
}

function readPayees(c: Record<string, unknown>, out: Partial<Ap2Constraints>): void {
  const type = "payment.allowed_payees";
  if (!Array.isArray(c.allowed)) throw invalid(type, "allowed must be an array of merchants");
  const ids = new Set<string>();
  for (const m of c.allowed) {
    if (isUndisclosedElement(m)) throw new Ap2ImportError("SD_JWT_UNPROCESSED", `${type}: allowed holds an undisclosed element`, type);
    if (!isRecord(m) || typeof m.id !== "string" || m.id.length === 0) throw invalid(type, "every allowed merchant needs a non-empty id");
    if (typeof m.name !== "string") throw invalid(type, `merchant ${JSON.stringify(m.id)} has no name`);
    ids.add(m.id);
  }
  if (ids.size === 0) throw new Ap2ImportError("UNSATISFIABLE", `${type}: allowed lists no payee`, type);
  out.payees = [...ids];
}

function readExecutionDate(c: Record<string, unknown>, out: Partial<Ap2Constraints>): void {
  if (c.not_before !== undefined) out.notBeforeMs = executionInstant(c.not_before, "not_before", false);
  if (c.not_after !== undefined) out.notAfterMs = executionInstant(c.not_after, "not_after", true);
}

function readRecurrence(c: Record<string, unknown>, out: Partial<Ap2Constraints>): void {
  const type = "payment.agent_recurrence";
  if (typeof c.frequency !== "string" || !(FREQUENCIES as readonly string[]).includes(c.frequency))
    throw invalid(type, `frequency ${JSON.stringify(c.frequency)} is not one of ${FREQUENCIES.join(", ")}`);
  const frequency = c.frequency as Ap2Frequency;
  if (c.max_occurrences !== undefined && (!Number.isSafeInteger(c.max_occurrences) || (c.max_occurrences as number) < 1)) {
    throw invalid(type, "max_occurrences must be a positive integer");
  }
  out.recurrence = c.max_occurrences === undefined ? { frequency } : { frequency, maxOccurrences: c.max_occurrences as number };
}

function readReference(c: Record<string, unknown>, out: Partial<Ap2Constraints>): void {
  const id = c.conditional_transaction_id;
  if (typeof id !== "string" || id.length === 0) throw invalid("payment.reference", "conditional_transaction_id must be a non-empty string");
  out.reference = id;
}

const READERS: Record<string, (c: Record<string, unknown>, out: Partial<Ap2Constraints>) => void> = {
  "payment.amount_range": readAmountRange,
  "payment.budget": readBudget,
  "payment.allowed_payees": readPayees,
  "payment.execution_date": readExecutionDate,
  "payment.agent_recurrence": readRecurrence,
  "payment.reference": readReference,
};

/** Reads and checks the constraints array (see the module comment). Throws Ap2ImportError. */
export function readConstraints(raw: unknown): Ap2Constraints {
  if (!Array.isArray(raw)) throw new Ap2ImportError("CLAIMS_INVALID", "constraints must be an array", "constraints");
  const out: Partial<Ap2Constraints> = {};
  const seen = new Set<string>();
  for (const c of raw) {
    if (isUndisclosedElement(c)) throw new Ap2ImportError("SD_JWT_UNPROCESSED", "constraints holds an undisclosed element", "constraints");
    if (!isRecord(c) || typeof c.type !== "string")
      throw new Ap2ImportError("CONSTRAINT_INVALID", "every constraint must be an object with a string type", "constraints");
    const type = c.type;
    const read = Object.prototype.hasOwnProperty.call(READERS, type) ? READERS[type] : undefined;
    if (!read) {
      const why = Object.prototype.hasOwnProperty.call(KNOWN_UNSUPPORTED, type) ? KNOWN_UNSUPPORTED[type] : "Writ does not know it";
      throw new Ap2ImportError(
        "CONSTRAINT_UNSUPPORTED",
        `constraint ${JSON.stringify(type)} cannot be mapped to a delegation scope (${why}); the mandate is refused rather than imported without it`,
        type,
      );
    }
    if (seen.has(type)) throw new Ap2ImportError("CONSTRAINT_DUPLICATE", `constraint ${type} appears more than once`, type);
    seen.add(type);
    const allowed = MEMBERS[type] ?? [];
    for (const k of Object.keys(c)) {
      if (!allowed.includes(k)) throw invalid(type, `unexpected member ${JSON.stringify(k)}`);
    }
    read(c, out);
  }
  if (out.reference === undefined) {
    throw new Ap2ImportError("CLAIMS_INVALID", "constraints must contain a payment.reference (the schema requires one)", "payment.reference");
  }
  return { ...out, reference: out.reference };
}
