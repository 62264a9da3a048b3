/**
 * Prepares an agreement for evaluation: every signature check, hash chain, time and amount is
 * worked out once per record revision, so `evaluate` only reads facts.
 *
 * Promises: never throws on hostile-but-typed input; every fact it cannot establish is set
 * fail-closed: an unusable ceiling or slice is undefined (the intent then counts as having
 * none), an unparseable `not_before` is +Infinity (never valid yet), an unparseable
 * `expires_at` is -Infinity (already expired), an unparseable `ledger_as_of` is NaN (stale),
 * and a `ledger_as_of` after `now` counts as `now`. `totalSpentMinor` adds the spend of the
 * intents in the ledger currency (parent_limits' currency, else the first mandate's); intents in
 * another currency cannot be added without a rate and are left out.
 */
import { sha256Hash, type HashString } from "../canonical/index.js";
import { keyId, parsePublicJwk } from "../jose/index.js";
import type { PreparedAgreement, PreparedMandate, SignatureState } from "./prepared.js";
import { ackStates } from "./acks.js";
import { verifyEventChain } from "./events.js";
import { spentByIntent, verifyLedger } from "./ledger.js";
import { optionalMinor, parentLimitsProblem } from "./limits.js";
import { mandateHash, verifyMandate } from "./mandate.js";
import { verifyRevocation } from "./revocation.js";
import { agreementSpentIn, ledgerCurrencyOf, mandatePeriods } from "../money/index.js";
import { parseInstant } from "../time/index.js";
import type { Acknowledgement, IntentAgreement, Mandate } from "./types.js";

/** Options of `prepareAgreement`. */
export interface PrepareOptions {
  /** Preparation time, epoch ms: a `ledger_as_of` later than this counts as this. */
  now?: number;
}

/** Stand-in hash of a mandate that has no canonical form (it can match nothing real). */
const UNHASHABLE: HashString = sha256Hash("writ:unhashable-mandate");

function attempt<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

function safeHash(m: Mandate): HashString {
  return attempt(() => mandateHash(m), UNHASHABLE);
}

function minorOrUndefined(amount: unknown, currency: unknown): bigint | undefined {
  const r = optionalMinor(amount, currency, "amount");
  return typeof r === "bigint" ? r : undefined;
}

function timeOr(text: unknown, unusable: number): number | undefined {
  if (text === undefined) return undefined;
  return parseInstant(text) ?? unusable;
}

interface MandateContext {
  agreementId: string;
  history: readonly Mandate[];
  acks: readonly Acknowledgement[];
  spent: ReadonlyMap<string, bigint>;
}

async function prepareMandate(m: Mandate, ctx: MandateContext): Promise<PreparedMandate> {
  const hash = safeHash(m);
  const signature: SignatureState = hash === UNHASHABLE ? "invalid" : await verifyMandate(m);
  const principalKid = attempt<HashString | undefined>(() => keyId(parsePublicJwk(m.principal.public_key)), undefined);
  const historyHashes = ctx.history.filter((h) => attempt(() => h.intent_id === m.intent_id, false)).map(safeHash);
  let acks: PreparedMandate["acks"];
  try {
    acks = await ackStates(m, hash, ctx.acks, historyHashes, ctx.agreementId);
  } catch {
    acks = [];
  }
  const out: PreparedMandate = {
    mandate: m,
    hash,
    signature,
    acks,
    spentMinor: attempt(() => ctx.spent.get(m.intent_id) ?? 0n, 0n),
  };
  if (principalKid !== undefined) out.principalKid = principalKid;
  const ceiling = attempt(() => minorOrUndefined(m.maximum_amount, m.currency), undefined);
  if (ceiling !== undefined) out.ceilingMinor = ceiling;
  const slice = attempt(() => minorOrUndefined(m.cumulative_maximum, m.currency), undefined);
  if (slice !== undefined) out.sliceMinor = slice;
  try {
    const periods = mandatePeriods(m);
    if (periods) out.periods = periods;
  } catch (e) {
    out.periods = { problem: e instanceof Error ? e.message : String(e) };
  }
  const notBefore = attempt(() => timeOr(m.not_before, Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
  if (notBefore !== undefined) out.notBeforeMs = notBefore;
  const expiresAt = attempt(() => timeOr(m.expires_at, Number.NEGATIVE_INFINITY), Number.NEGATIVE_INFINITY);
  if (expiresAt !== undefined) out.expiresAtMs = expiresAt;
  return out;
}

function ledgerAsOf(text: unknown, now: number | undefined): number {
  const ms = parseInstant(text) ?? Number.NaN;
  return now !== undefined && ms > now ? now : ms;
}

/** Prepares `agreement` for the evaluator (see the module promises). */
export async function prepareAgreement(agreement: IntentAgreement, opts: PrepareOptions = {}): Promise<PreparedAgreement> {
  const list = <T>(v: T[] | undefined): T[] => (Array.isArray(v) ? v.filter((x) => typeof x === "object" && x !== null) : []);
  const mandates = list(agreement.mandates);
  const spent = attempt(() => spentByIntent(agreement), new Map<string, bigint>());
  const ctx: MandateContext = {
    agreementId: agreement.agreement_id,
    history: list(agreement.mandate_history),
    acks: list(agreement.acknowledgements),
    spent,
  };
  const prepared = await Promise.all(mandates.map((m) => prepareMandate(m, ctx)));
  const parent = agreement.parent_limits;
  const ledgerCurrency = attempt(() => ledgerCurrencyOf({ mandates, parent_limits: parent }), undefined);
  const chainProblem = attempt(() => verifyEventChain(agreement.events, agreement.agreement_id), "the event log cannot be read");
  const out: PreparedAgreement = {
    agreement,
    mandates: prepared,
    ledger: verifyLedger(agreement),
    ledgerAsOfMs: ledgerAsOf(agreement.ledger_as_of, opts.now),
    ledgerSequence: Number.isSafeInteger(agreement.ledger_sequence) && agreement.ledger_sequence >= 0 ? agreement.ledger_sequence : 0,
    totalSpentMinor: attempt(() => agreementSpentIn(mandates, spent, ledgerCurrency), 0n),
    revocation: await verifyRevocation(agreement),
  };
  if (chainProblem !== undefined) out.eventChainProblem = chainProblem;
  const limits = parentLimitsProblem(agreement);
  if (limits !== undefined) out.parentLimitsProblem = limits;
  if (parent !== undefined && typeof parent === "object" && parent !== null) {
    const ceiling = attempt(() => minorOrUndefined(parent.maximum_amount, parent.currency), undefined);
    if (ceiling !== undefined) out.parentCeilingMinor = ceiling;
    const cumulative = attempt(() => minorOrUndefined(parent.cumulative_maximum, parent.currency), undefined);
    if (cumulative !== undefined) out.parentCumulativeMinor = cumulative;
  }
  return out;
}
