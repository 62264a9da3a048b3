/**
 * Imports an AP2 open payment mandate (`vct` "mandate.payment.open.1") as delegation
 * evidence: the user's or trusted surface's key confirms the agent key (`cnf.jwk`), `exp`
 * bounds the grant, and the constraints become the scope. The caller has already verified
 * the SD-JWT's signature and resolved its disclosures (./sd-jwt.ts; ./accept.ts does both);
 * this function trusts the claims' origin but not their shape, and refuses (Ap2ImportError)
 * anything it cannot honour.
 *
 * Mapping (amounts in Scope are major-unit numbers, converted exactly from minor units):
 * - `payment.amount_range.max` (minor units) and the pre-set `payment_amount` -> the smaller
 *   is `maximum_amount`.
 * - `payment.budget.max` (major units) -> `cumulative_maximum`.
 * - Recurrence: without `payment.agent_recurrence` the mandate is single-use, enforced as a
 *   money bound: `cumulative_maximum` is at most the per-payment maximum. With it (it
 *   requires amount_range and budget, as in AP2) the scope becomes a recurring mandate, its
 *   limits per period in UTC (AP2 names no time zone; src/core/money/periods.ts): the
 *   frequency is at most one payment per window (DAILY: a day, WEEKLY: a week from Monday,
 *   BIWEEKLY: a rolling 14 days, MONTHLY: a month, QUARTERLY: a quarter, ANNUALLY: a year;
 *   ON_DEMAND: no window), and `max_occurrences` N is a count limit of N in all (`total`) and
 *   bounds `cumulative_maximum` by N x the per-payment maximum.
 * - `payment.allowed_payees` and the pre-set `payee` -> `merchants` (merchant `id`s; both
 *   present: the payee must be allowed, and only it remains).
 * - `granted_at` is the latest of `iat` (else `now`), `nbf` and `execution_date.not_before`;
 *   `expires_at` the earliest of `exp` and `execution_date.not_after` (a date ends at the
 *   next UTC midnight). The evaluator then enforces both at evaluation time.
 * - `payment.reference` (the checkout digest, required by the schema) is recorded in
 *   `purpose`; binding the payment to that checkout is checked by the AP2 parties.
 * - `action_types` defaults to ["purchase"]; conditions are empty; the chain is empty.
 * - Top-level `payment_instrument`, `pisp` and `execution_date` are refused (Writ cannot
 *   enforce them); `risk_data`, `iss`, `sub`, `aud`, `jti` are informative; any other
 *   claim is refused.
 */
import type { PrincipalType } from "../agreement/index.js";
import type { Delegation, HumanApproval, Scope } from "../delegation/index.js";
import { formatInstant } from "../time/index.js";
import { JoseError, keyId, parsePublicJwk, type PublicJwk } from "../jose/index.js";
import { formatMinor, isCurrency, toMinor, type PeriodLimit } from "../money/index.js";
import { Ap2ImportError } from "./ap2-errors.js";
import { isRecord, isUndisclosedElement, readConstraints, type Ap2Frequency } from "./ap2-constraints.js";

/** The limits per period an AP2 `agent_recurrence` stands for (see the module comment). */
export function recurrenceLimits(r: { frequency: Ap2Frequency; maxOccurrences?: number }): PeriodLimit[] {
  const per: Partial<Record<Ap2Frequency, PeriodLimit>> = {
    DAILY: { period: "day", count: 1 },
    WEEKLY: { period: "week", count: 1 },
    BIWEEKLY: { rolling: "P14D", count: 1 },
    MONTHLY: { period: "month", count: 1 },
    QUARTERLY: { period: "quarter", count: 1 },
    ANNUALLY: { period: "year", count: 1 },
  };
  const out: PeriodLimit[] = [];
  const window = per[r.frequency];
  if (window) out.push(window);
  if (r.maxOccurrences !== undefined) out.push({ period: "total", count: r.maxOccurrences });
  return out;
}

/** The `vct` of an AP2 open payment mandate. */
export const OPEN_PAYMENT_MANDATE_VCT = "mandate.payment.open.1";

/** Inputs of the import besides the claims. */
export interface Ap2ImportOptions {
  /** The agent's public key; `cnf.jwk` must be this key. */
  agentKey: PublicJwk;
  /** The principal the mandate speaks for (the user). */
  principal: { type: PrincipalType; id: string };
  delegationId: string;
  /** Evaluation time, epoch ms. */
  now: number;
  /** The agent's registry id; default its key fingerprint (`keyId(agentKey)`). */
  agentId?: string;
  /** Allowed action verbs; default ["purchase"]. */
  actionTypes?: string[];
  /** HUMAN_APPROVAL evidence to attach (a mandate living over 7 days is a standing grant). */
  approval?: HumanApproval;
}

const INFORMATIVE = new Set(["vct", "constraints", "cnf", "payee", "payment_amount", "risk_data", "iat", "exp", "nbf", "iss", "sub", "aud", "jti"]);
const REFUSED_CLAIMS: Record<string, string> = {
  payment_instrument: "actions evaluated by Writ carry no payment instrument",
  pisp: "actions evaluated by Writ carry no payment initiation service provider",
  execution_date: "a pre-set execution date cannot be enforced on a delegation",
};

function epochSeconds(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) > 8.64e12) {
    throw new Ap2ImportError("CLAIMS_INVALID", `${name} must be an integer number of seconds since the epoch`, name);
  }
  return (v as number) * 1000;
}

function checkClaimNames(claims: Record<string, unknown>): void {
  for (const k of Object.keys(claims)) {
    if (k === "_sd" || k === "_sd_alg")
      throw new Ap2ImportError("SD_JWT_UNPROCESSED", `claim ${k} shows undisclosed SD-JWT content; pass the processed claims`, k);
    if (Object.prototype.hasOwnProperty.call(REFUSED_CLAIMS, k)) {
      throw new Ap2ImportError(
        "CLAIM_UNSUPPORTED",
        `claim ${k} cannot be honoured (${REFUSED_CLAIMS[k]}); the mandate is refused rather than imported without it`,
        k,
      );
    }
    if (!INFORMATIVE.has(k)) throw new Ap2ImportError("CLAIM_UNSUPPORTED", `claim ${JSON.stringify(k)} is not known to Writ; the mandate is refused`, k);
  }
}

function checkCnf(cnf: unknown, agentKey: PublicJwk): void {
  if (!isRecord(cnf) || Object.keys(cnf).length !== 1 || !("jwk" in cnf)) {
    throw new Ap2ImportError("CNF_INVALID", "cnf must be {jwk} with the agent's public key", "cnf");
  }
  let confirmed: PublicJwk;
  let agent: PublicJwk;
  try {
    confirmed = parsePublicJwk(cnf.jwk);
  } catch (e) {
    if (e instanceof JoseError) throw new Ap2ImportError("CNF_INVALID", `cnf.jwk: ${e.message}`, "cnf");
    throw e;
  }
  try {
    agent = parsePublicJwk(agentKey);
  } catch (e) {
    if (e instanceof JoseError) throw new Ap2ImportError("CNF_INVALID", `the agent key is not a usable public JWK: ${e.message}`, "cnf");
    throw e;
  }
  const confirmedKid = keyId(confirmed);
  const agentKid = keyId(agent);
  if (confirmedKid !== agentKid) {
    throw new Ap2ImportError("CNF_KEY_MISMATCH", `cnf.jwk is key ${confirmedKid}, not the agent's key ${agentKid}`, "cnf");
  }
}

function presetAmount(v: unknown): { currency: string; minor: bigint } | undefined {
  if (v === undefined) return undefined;
  if (!isRecord(v) || !Number.isSafeInteger(v.amount) || (v.amount as number) < 0 || !isCurrency(v.currency)) {
    throw new Ap2ImportError("CLAIMS_INVALID", "payment_amount must be {amount: integer minor units, currency: ISO 4217}", "payment_amount");
  }
  return { currency: v.currency, minor: BigInt(v.amount as number) };
}

function presetPayee(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (isUndisclosedElement(v)) throw new Ap2ImportError("SD_JWT_UNPROCESSED", "payee is undisclosed", "payee");
  if (!isRecord(v) || typeof v.id !== "string" || v.id.length === 0 || typeof v.name !== "string") {
    throw new Ap2ImportError("CLAIMS_INVALID", "payee must be a merchant {id, name}", "payee");
  }
  return v.id;
}

function smaller(a: bigint | undefined, b: bigint | undefined): bigint | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a < b ? a : b;
}

/** Minor units as a major-unit JSON number, refusing amounts a double cannot carry exactly. */
function majorNumber(minor: bigint, currency: string, subject: string): number {
  const n = Number(formatMinor(minor, currency));
  if (toMinor(n, currency) !== minor) {
    throw new Ap2ImportError("CONSTRAINT_INVALID", `${subject}: ${formatMinor(minor, currency)} ${currency} is too large to carry exactly`, subject);
  }
  return n;
}

/**
 * Builds a Delegation from the processed claims of an AP2 open payment mandate (see the
 * module comment for the mapping). Throws Ap2ImportError with a stable code on anything it
 * cannot honour.
 */
export function importOpenPaymentMandate(claims: unknown, opts: Ap2ImportOptions): Delegation {
  if (
    typeof opts.delegationId !== "string" ||
    opts.delegationId.length === 0 ||
    typeof opts.principal?.id !== "string" ||
    opts.principal.id.length === 0 ||
    !Number.isFinite(opts.now)
  ) {
    throw new Ap2ImportError("OPTIONS_INVALID", "delegationId and principal.id must be non-empty strings and now a finite epoch-ms time");
  }
  if (!isRecord(claims)) throw new Ap2ImportError("CLAIMS_INVALID", "the mandate claims must be a JSON object");
  if (claims.vct !== OPEN_PAYMENT_MANDATE_VCT) {
    throw new Ap2ImportError("VCT_UNSUPPORTED", `vct ${JSON.stringify(claims.vct)} is not ${OPEN_PAYMENT_MANDATE_VCT}`, "vct");
  }
  checkClaimNames(claims);
  checkCnf(claims.cnf, opts.agentKey);
  const expMs = epochSeconds(claims.exp, "exp");
  if (expMs === undefined) throw new Ap2ImportError("CLAIMS_INVALID", "exp is required: it bounds the grant", "exp");
  if (expMs <= opts.now) throw new Ap2ImportError("MANDATE_EXPIRED", `exp ${formatInstant(expMs)} is not in the future`, "exp");
  const iatMs = epochSeconds(claims.iat, "iat");
  const nbfMs = epochSeconds(claims.nbf, "nbf");
  const c = readConstraints(claims.constraints);
  const preset = presetAmount(claims.payment_amount);
  const payee = presetPayee(claims.payee);

  const currencies = new Set([c.amountRange?.currency, c.budget?.currency, preset?.currency].filter((x): x is string => x !== undefined));
  const [currency] = currencies;
  if (currency === undefined)
    throw new Ap2ImportError("NO_AMOUNT_BOUND", "the mandate has no payment.amount_range, payment.budget or payment_amount, so no amount bound");
  if (currencies.size > 1) throw new Ap2ImportError("CURRENCY_MISMATCH", `amount constraints name several currencies: ${[...currencies].join(", ")}`);

  const perPayment = smaller(c.amountRange?.maxMinor, preset?.minor);
  let cumulative = c.budget?.maxMinor;
  if (c.recurrence) {
    if (!c.amountRange || !c.budget) {
      throw new Ap2ImportError("CONSTRAINT_INVALID", "payment.agent_recurrence requires payment.amount_range and payment.budget", "payment.agent_recurrence");
    }
    const n = c.recurrence.maxOccurrences;
    if (n !== undefined && perPayment !== undefined) cumulative = smaller(cumulative, perPayment * BigInt(n));
  } else {
    cumulative = smaller(cumulative, perPayment); // single use: at most one payment's worth
  }

  let merchants = c.payees;
  if (payee !== undefined) {
    if (merchants && !merchants.includes(payee)) {
      throw new Ap2ImportError("UNSATISFIABLE", `the pre-set payee ${JSON.stringify(payee)} is not among payment.allowed_payees`, "payee");
    }
    merchants = [payee];
  }

  let grantedMs = iatMs ?? opts.now;
  for (const t of [nbfMs, c.notBeforeMs]) if (t !== undefined && t > grantedMs) grantedMs = t;
  let expiresMs = expMs;
  if (c.notAfterMs !== undefined && c.notAfterMs < expiresMs) {
    expiresMs = c.notAfterMs;
    if (expiresMs <= opts.now) {
      throw new Ap2ImportError("MANDATE_EXPIRED", `payment.execution_date.not_after ended at ${formatInstant(expiresMs)}`, "payment.execution_date");
    }
  }
  if (grantedMs >= expiresMs) {
    throw new Ap2ImportError(
      "UNSATISFIABLE",
      `the mandate's window is empty: it starts at ${formatInstant(grantedMs)} and ends at ${formatInstant(expiresMs)}`,
    );
  }

  const scope: Scope = { currency };
  if (perPayment !== undefined) scope.maximum_amount = majorNumber(perPayment, currency, "maximum_amount");
  if (cumulative !== undefined) scope.cumulative_maximum = majorNumber(cumulative, currency, "cumulative_maximum");
  scope.action_types = [...(opts.actionTypes ?? ["purchase"])];
  if (merchants) scope.merchants = [...merchants];
  if (c.recurrence) {
    const limits = recurrenceLimits(c.recurrence);
    if (limits.length > 0) scope.period_limits = limits;
  }

  const agent = parsePublicJwk(opts.agentKey);
  const delegation: Delegation = {
    delegation_id: opts.delegationId,
    principal: { type: opts.principal.type, id: opts.principal.id },
    agent: { agent_id: opts.agentId ?? keyId(agent), public_key: agent },
    granted_at: formatInstant(grantedMs),
    expires_at: formatInstant(expiresMs),
    purpose: `AP2 open payment mandate bound to checkout ${c.reference.slice(0, 200)}`,
    scope,
    conditions: [],
    revocable: true,
    delegation_chain: [],
    status: "active",
  };
  if (opts.approval) delegation.approval = structuredClone(opts.approval);
  return delegation;
}
