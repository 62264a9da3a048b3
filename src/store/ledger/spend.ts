/**
 * The spend transaction of verified ALLOWs: record each action in its agreement's hash-chained
 * ledger, exactly once, without ever exceeding a cumulative budget. Spends that arrive together
 * share one transaction (`recordAllowedSpends`, the group commit of
 * src/verify/pipeline/spend-writer.ts); `recordAllowedSpend` is a batch of one.
 *
 * Promises of `recordAllowedSpends`:
 * - ONE short transaction, two round trips whatever the batch's size: (1) BEGIN, the locks of
 *   every delegation row whose budget applies (`FOR NO KEY UPDATE`, by depth then id), of every
 *   agreement row (by agent, then id; the lock order of ./index.ts, the same in every batch, so
 *   batches never deadlock one another), and ONE read of the heads, totals, revocations and
 *   stored answers of all the batch's spends, in a statement that starts after the locks are
 *   held, so it sees every spend and release committed before; (2) ONE statement that inserts
 *   the entries, moves the heads, adds to the intents' totals and stores the verify answers,
 *   then COMMIT. Both are simple-protocol queries (the inputs are escaped `jsonb` literals);
 *   the read and the writes are the functions `writ_spend_read` and `writ_spend_write`
 *   (src/store/sql/functions/), planned once per connection (./spend-sql.ts). They read and
 *   write rows; every decision is made here, under the locks.
 * - Each spend is decided in the batch's order, in TypeScript, against the read plus the
 *   spends before it in the batch, exactly as if those had committed before it: two spends on
 *   one agreement are chained in order (the second entry names the first as its previous
 *   head), and a spend whose budget an earlier one took is refused with the budget's reason.
 *   A refusal never fails the batch; nor does a spend that is malformed (`{failed}`, its own
 *   SPEND_INVALID). Nothing is written for a refused spend.
 * - Budgets are checked with the core's budget rule (src/core/money/budget.ts: integer minor
 *   units, mixed currencies): the intent's cumulative slice against its total, the parent
 *   cumulative maximum against the agreement's total in the entry's currency, the
 *   delegation's cumulative maximum against the spend of all the delegation's agreements in
 *   its scope currency (spend in another currency under the delegation cannot be added
 *   without a rate: refused, fail closed). A delegation that has sub-delegations counts their
 *   spend too (its subtree: sql/functions/writ_subtree_spend.sql).
 * - Sub-delegations: when the agreement's delegation has a chain citing a stored delegation,
 *   the spend must declare it (`limits.chain`, the ids as stored, root first; else
 *   CHAIN_BROKEN) and every
 *   STORED ancestor's cumulative maximum is re-checked against its subtree's spend plus this
 *   amount (DELEGATION_BUDGET_EXCEEDED naming the ancestor), its row locked before the
 *   child's; a revoked ancestor refuses (CHAIN_LINK_REVOKED). The budgets are read from the
 *   stored rows under their locks, never from the child's copy of its chain. A spend without
 *   a chain reads nothing more than before. An ancestor's limits per period are counted and
 *   checked the same way: the spend names them (`limits.periods`, owner the ancestor, from
 *   its stored scope as the verify path read it) and is counted in the ancestor's windows.
 * - Idempotent on `actionId`, for as long as the ledger exists: an action already recorded as
 *   allowed (before, or earlier in the batch) returns its entry (`replayed: true`) and spends
 *   nothing, whatever the budgets and revocations say now, but only when the spend is the same
 *   request: its `decision.requestHash` equals the one stored with the entry (the column
 *   `request_hash`, migrations/0210_ledger_request_hash.sql); when either has none, its amount
 *   (minor units) and intent equal the entry's. Another request is `{recorded: false, reason:
 *   "ACTION_REUSED"}` and spends nothing: a verify decision that was pruned (retention) never
 *   lets a reused action_id be answered with the old entry. An action of an imported ledger
 *   (./import.ts) is never replayed nor spent: `ACTION_REUSED`. An action
 *   whose spend was released since (a `failed` outcome) is neither replayed nor spent again:
 *   the result is `{recorded: false, reason: "ACTION_RELEASED"}` and the caller tells its
 *   client to use a new action id (an ALLOW is never answered for an amount the budget no
 *   longer counts). An action that already has a stored answer (its `decision`'s agent and
 *   action, stored before or earlier in the batch) is not spent either (`ACTION_DECIDED`): a
 *   retry of a refused action never writes to the ledger.
 * - Re-checked inside the lock as well: the agreement is stored, active or accepted, not
 *   revoked (also not named by a pushed revocation), the intent is in its record with the
 *   spend's currency (taken from the spend while the `revision` it names is still stored:
 *   that record is the one the spend was decided on), and the delegation is not revoked.
 *   Each refusal is a reason code of the evaluation union, which the caller turns into a DENY.
 * - The entry: `{action_id, at, currency, outcome: "allowed", amount, intent_id,
 *   idempotency_key: action_id}` chained by `nextLedgerEntry` (the core's rule).
 * - The results are returned only after COMMIT returned, i.e. durably committed. When the
 *   transaction fails, it is rolled back, nothing of it was written, and the call throws (the
 *   group commit then retries the batch's halves apart: src/store/isolated-batch.ts).
 * - The revision of the agreement is NOT bumped (the ledger is versioned by its sequence), so
 *   prepared records stay cached.
 *
 * Lock order: ./index.ts (delegation rows by depth then id: ancestors root first, then the
 * child).
 */
import type { Pool, PoolClient, QueryResult } from "pg";
import type { LedgerEntry } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import type { ReasonCode } from "../../core/evaluate/index.js";
import { addSpend, checkBudget, spentIn, formatMinor, minorToNumber, toMinor, isCurrency } from "../../core/money/index.js";
import { hasNul } from "../../core/schemas/index.js";
import { withTransaction } from "../pool.js";
import { RecordStoreError } from "../record-errors.js";
import { chainSpendSql, type ChainSpendRow } from "./chain-spend.js";
import { nextLedgerEntry } from "./next-entry.js";
import { ownerAgent, ownerKey, periodSlot, RunningPeriods, usageByKey, windowInputs, type PeriodSlot, type SpendPeriods } from "./periods.js";
import {
  lockAndReadSql,
  periodReadSql,
  spendPairs,
  writeAndCommitSql,
  type PeriodReadRow,
  type PeriodWrites,
  type SpendReadInput,
  type SpendReadRow as ReadRow,
  type SpendWriteRow,
} from "./spend-sql.js";

/** Cumulative limits to re-check inside the lock (minor units). Absent: that limit does not apply. */
export interface SpendLimits {
  /** The intent's cumulative slice, in the intent's currency. */
  sliceMinor?: bigint;
  /** The agreement's parent cumulative maximum, in the entry's currency. */
  parentCumulativeMinor?: bigint;
  /** The delegation's cumulative maximum; its row is locked first. */
  delegation?: {
    delegationId: string;
    cumulativeMinor: bigint;
    /** The delegation scope's currency. */
    currency: string;
    /** The action's amount in that currency (default `amountMinor`, which must then be in it). */
    amountMinor?: bigint;
  };
  /**
   * The stored chain above the agreement's delegation, required when it has one: every
   * ancestor's row is locked (root first, before the delegation's) and its cumulative maximum
   * re-checked with `amountMinor`, the action's amount in `currency` (the chain's scope currency).
   */
  chain?: {
    delegationId: string;
    /** The chain's ids as stored, root first. */
    ancestorIds: readonly string[];
    currency: string;
    amountMinor: bigint;
  };
  /**
   * Limits per period (./periods.ts): of the intent, of the agreement's delegation and of any
   * stored ancestor in `chain` (each delegation's row is then locked; an ancestor's windows
   * count its whole subtree's spend), checked at `at` against the windows' counters under the locks.
   */
  periods?: SpendPeriods[];
}

/** One allowed action to record. */
export interface AllowedSpend {
  agreementId: string;
  /**
   * The agreement's agent: every row of the spend is keyed and read by it (docs/scale.md,
   * "Keys"). Default: the decision's agent; without either it is read by the agreement id
   * before the transaction (one more statement; the verify path always gives the agent).
   */
  agentId?: string;
  intentId: string;
  actionId: string;
  /** Amount in minor units of `currency`, which must be the intent's currency. */
  amountMinor: bigint;
  currency: string;
  /** RFC 3339 time of the entry. */
  at: string;
  /**
   * The agreement revision the spend was decided on, whose record gave `currency` as the
   * intent's currency: while that revision is the stored one, the spend transaction takes
   * `currency` as the intent's without reading the record (sql/functions/writ_spend_read.sql).
   * Absent: the stored record's intent is read.
   */
  revision?: number;
  limits?: SpendLimits;
  /** The verify answer, stored in `verify_decisions` in the same transaction when the spend is recorded. */
  decision?: { agentId: string; requestHash: HashString; body: Record<string, unknown> };
}

/** Reasons `recordAllowedSpend` refuses for. */
export type SpendRefusal = Extract<
  ReasonCode,
  | "CUMULATIVE_BUDGET_EXCEEDED"
  | "DELEGATION_BUDGET_EXCEEDED"
  | "AGREEMENT_REVOKED"
  | "DELEGATION_REVOKED"
  | "NO_ACTIVE_AGREEMENT"
  | "INTENT_NOT_FOUND"
  | "CHAIN_BROKEN"
  | "CHAIN_LINK_REVOKED"
  | "PERIOD_LIMIT_EXCEEDED"
  | "PERIOD_COUNT_EXCEEDED"
>;

/** The outcome of `recordAllowedSpend`. */
export type SpendResult =
  | {
      recorded: true;
      /** True when the action was recorded before: nothing was spent now. */
      replayed: boolean;
      entry: LedgerEntry;
      /** The intent's total after this spend (only when not replayed). */
      intentSpentMinor?: bigint;
      /** The delegation's total after this spend, in its currency (only when not replayed and a delegation budget applied). */
      delegationSpentMinor?: bigint;
      /**
       * True when the spend's `decision` was stored in this transaction (so no other answer for
       * the action exists); false when none was given, another was stored first, or replayed.
       */
      decisionStored?: boolean;
    }
  | { recorded: false; reason: SpendRefusal; message: string }
  /** The action was allowed before and its spend released since (outcome `failed`): never replayed as an ALLOW. */
  | { recorded: false; reason: "ACTION_RELEASED"; message: string; entry: LedgerEntry }
  /** Another answer is already stored for the action (its `decision`): nothing was spent. */
  | { recorded: false; reason: "ACTION_DECIDED"; message: string }
  /** The action is in the ledger for another request (or was imported with the record): nothing was spent, never replayed. */
  | { recorded: false; reason: "ACTION_REUSED"; message: string; entry: LedgerEntry | null };

/** Options of `recordAllowedSpend`. */
export interface SpendOptions {
  /** Receives the transaction's duration in seconds (the `writ_ledger_append_seconds` histogram). */
  observe?: (seconds: number) => void;
  /** WRIT_PERIOD_HOUR_COUNTERS_FROM (./periods.ts, HOUR_COUNTERS_FROM). */
  hourCountersFrom?: number;
}

/** The totals a spend is checked against (minor units). */
interface Totals {
  intentSpent: bigint;
  totalSpent: bigint;
  /** The delegation's spend in its currency; undefined when it holds other currencies (or no delegation budget applies). */
  delegationSpent: bigint | undefined;
}

/** An id the spend transaction can store: a non-empty string without NUL (the core's text rule). */
const storableId = (v: unknown): v is string => typeof v === "string" && v.length > 0 && !hasNul(v);

function checkInput(s: AllowedSpend): void {
  const bad = (why: string) => new RecordStoreError("SPEND_INVALID", why);
  for (const [k, v] of [
    ["agreementId", s.agreementId],
    ["intentId", s.intentId],
    ["actionId", s.actionId],
  ] as const) {
    if (typeof v !== "string" || v.length === 0 || v.length > 256) throw bad(`${k} must be 1 to 256 characters`);
    if (hasNul(v)) throw bad(`${k} must not contain NUL`);
  }
  if (!isCurrency(s.currency)) throw bad("currency must be an ISO 4217 code");
  if (typeof s.amountMinor !== "bigint" || s.amountMinor < 0n) throw bad("amountMinor must be a bigint at or above 0");
  if (s.revision !== undefined && (!Number.isSafeInteger(s.revision) || s.revision < 1)) throw bad("revision must be a whole number at or above 1");
  const d = s.limits?.delegation;
  if (d && !storableId(d.delegationId)) throw bad("delegation.delegationId must be a non-empty string without NUL");
  if (d && d.currency !== s.currency && d.amountMinor === undefined) throw bad("a delegation budget in another currency needs delegation.amountMinor");
  const c = s.limits?.chain;
  if (c && (c.ancestorIds.length === 0 || [c.delegationId, ...c.ancestorIds].some((x) => !storableId(x)))) {
    throw bad("chain needs a delegationId and at least one ancestor id, each a non-empty string without NUL");
  }
  if (c && (typeof c.amountMinor !== "bigint" || c.amountMinor < 0n)) throw bad("chain.amountMinor must be a bigint at or above 0");
  for (const p of s.limits?.periods ?? []) {
    if (typeof p.amountMinor !== "bigint" || p.amountMinor < 0n) throw bad("periods[].amountMinor must be a bigint at or above 0");
    if (!isCurrency(p.currency)) throw bad("periods[].currency must be an ISO 4217 code");
    if (p.owner === "delegation" && !storableId(p.delegationId)) throw bad("periods[].delegationId must be a non-empty string without NUL");
  }
  if (s.limits?.periods?.length && !Number.isFinite(Date.parse(s.at))) throw bad("at must be an RFC 3339 time when period limits apply");
}

/** The amount as the JSON number the entry carries; refused when a number cannot carry it exactly. */
function entryAmount(minor: bigint, currency: string): number {
  const n = minorToNumber(minor, currency);
  if (toMinor(n, currency) !== minor)
    throw new RecordStoreError("SPEND_INVALID", `amount ${formatMinor(minor, currency)} ${currency} cannot be carried exactly by a JSON number`);
  return n;
}

function refusalMessage(reason: SpendRefusal, s: AllowedSpend, t: Totals | undefined): string {
  const fmt = (v: bigint | undefined, ccy: string) => `${formatMinor(v ?? 0n, ccy)} ${ccy}`;
  switch (reason) {
    case "CUMULATIVE_BUDGET_EXCEEDED":
      return `${fmt(s.amountMinor, s.currency)} on top of ${fmt(t?.intentSpent, s.currency)} spent under intent ${s.intentId} (${fmt(t?.totalSpent, s.currency)} under the agreement) exceeds a cumulative budget`;
    case "DELEGATION_BUDGET_EXCEEDED": {
      const d = s.limits?.delegation;
      const ccy = d?.currency ?? s.currency;
      if (t && t.delegationSpent === undefined)
        return `the delegation's spend includes other currencies than ${ccy}, which cannot be added to its cumulative maximum without a rate`;
      return `${fmt(d?.amountMinor ?? s.amountMinor, ccy)} on top of ${fmt(t?.delegationSpent, ccy)} spent under delegation ${d?.delegationId ?? ""} exceeds its cumulative maximum ${fmt(d?.cumulativeMinor, ccy)}`;
    }
    case "AGREEMENT_REVOKED":
      return `agreement ${s.agreementId} is revoked`;
    case "DELEGATION_REVOKED":
      return `the delegation of agreement ${s.agreementId} is revoked`;
    case "NO_ACTIVE_AGREEMENT":
      return `agreement ${s.agreementId} is not stored as active or accepted`;
    case "INTENT_NOT_FOUND":
      return `intent ${s.intentId} is not a live intent of agreement ${s.agreementId}`;
    case "CHAIN_BROKEN":
      return `the delegation chain of agreement ${s.agreementId} is not the one stored`;
    case "CHAIN_LINK_REVOKED":
      return `a delegation above the delegation of agreement ${s.agreementId} is revoked`;
    case "PERIOD_LIMIT_EXCEEDED":
    case "PERIOD_COUNT_EXCEEDED":
      return `a limit per period of agreement ${s.agreementId} refuses the spend`;
  }
}

const refused = (reason: SpendRefusal, s: AllowedSpend, t?: Totals): SpendResult => ({ recorded: false, reason, message: refusalMessage(reason, s, t) });
const key = (a: string, b: string) => `${a}\u0000${b}`;
const sorted = (ids: Iterable<string>) => [...new Set(ids)].sort();

/**
 * The batch's running state: what the spends decided so far in this transaction added to what
 * the read found (heads, totals, entries, answers). A spend is decided against the read's
 * values plus the earlier spends of the batch, exactly as if they had committed before it.
 */
class Running {
  readonly heads = new Map<string, { sequence: number; head: HashString | undefined }>();
  /** Added per (agreement, intent); per (agreement, currency); per delegation, by currency. */
  readonly intent = new Map<string, bigint>();
  readonly agreementCcy = new Map<string, bigint>();
  readonly delegation = new Map<string, Map<string, bigint>>();
  /** Entries recorded in the batch by (agreement, action), with their spends; answers stored by (agent, action). */
  readonly entries = new Map<string, { entry: LedgerEntry; spend: AllowedSpend }>();
  readonly decided = new Set<string>();
  /** The period windows read, and the batch's period events and window counters to write. */
  periods: RunningPeriods = new RunningPeriods(new Map());

  totals(s: AllowedSpend, r: ReadRow): Totals {
    const d = s.limits?.delegation;
    return {
      intentSpent: BigInt(r.intent_spent) + (this.intent.get(key(s.agreementId, s.intentId)) ?? 0n),
      totalSpent: BigInt(r.total_spent) + (this.agreementCcy.get(key(s.agreementId, s.currency)) ?? 0n),
      delegationSpent: d ? this.spentUnder(r.delegation_id, r.delegation_spend, d.currency) : undefined,
    };
  }

  /** Delegation `id`'s spend in `currency`: what the read found plus the batch's earlier spends under it (the budget rule's mixed currencies). */
  spentUnder(id: string | null, read: ReadRow["delegation_spend"] | undefined, currency: string): bigint | undefined {
    return spentIn(addSpend(spendPairs(read), id !== null ? this.delegation.get(id) : undefined), currency);
  }

  add(s: AllowedSpend, r: ReadRow, entry: LedgerEntry): void {
    const inc = <K>(m: Map<K, bigint>, k: K, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
    this.heads.set(s.agreementId, { sequence: entry.sequence, head: entry.entry_hash });
    inc(this.intent, key(s.agreementId, s.intentId), s.amountMinor);
    inc(this.agreementCcy, key(s.agreementId, s.currency), s.amountMinor);
    // Counted for the delegation and for every ancestor (whose totals are their subtrees').
    for (const id of r.delegation_id !== null ? [r.delegation_id, ...(r.delegation_chain ?? [])] : []) {
      const byCcy = this.delegation.get(id) ?? new Map<string, bigint>();
      this.delegation.set(id, inc(byCcy, s.currency, s.amountMinor));
    }
    this.entries.set(key(s.agreementId, s.actionId), { entry, spend: s });
    if (s.decision) this.decided.add(key(s.decision.agentId, s.actionId));
  }
}

/**
 * Whether spend `s` is the request that `entry` (the action's allowed entry) answered: the same
 * request hash when both have one, else the same amount (minor units) and intent.
 */
function sameRequest(s: AllowedSpend, entry: LedgerEntry, entryHash: HashString | null): boolean {
  const hash = s.decision?.requestHash;
  if (hash !== undefined && entryHash !== null) return hash === entryHash;
  let minor: bigint | undefined;
  try {
    minor = entry.amount === undefined ? undefined : toMinor(entry.amount, entry.currency);
  } catch {
    minor = undefined;
  }
  return minor === s.amountMinor && entry.intent_id === s.intentId && entry.currency === s.currency;
}

const reused = (s: AllowedSpend, entry: LedgerEntry): SpendResult => ({
  recorded: false,
  reason: "ACTION_REUSED",
  message: `action ${s.actionId} is recorded in the ledger of agreement ${s.agreementId} (entry ${entry.sequence}) for another request; an action_id is spent for as long as the ledger exists`,
  entry,
});

/**
 * The first stored ancestor of the spend's delegation whose state or cumulative maximum
 * refuses the spend (root first), as a refusal; undefined when every one allows it or the
 * delegation has no chain. See the module comment.
 */
function chainRefusal(s: AllowedSpend, r: ReadRow, run: Running): SpendResult | undefined {
  const stored = r.delegation_chain ?? [];
  if (stored.length === 0) return undefined;
  const c = s.limits?.chain;
  const no = (reason: SpendRefusal, message: string): SpendResult => ({ recorded: false, reason, message });
  // A chain none of whose links is stored has no budget above to re-check (evaluation refuses it: CHAIN_BROKEN).
  if (!c && (r.ancestors ?? []).length === 0) return undefined;
  if (!c || c.delegationId !== r.delegation_id || c.ancestorIds.length !== stored.length || c.ancestorIds.some((id, i) => id !== stored[i])) {
    return no("CHAIN_BROKEN", `the chain of delegation ${r.delegation_id ?? ""} is stored as [${stored.join(", ")}], not the one this action was checked on`);
  }
  const byId = new Map((r.ancestors ?? []).map((a) => [a.id, a]));
  for (const id of stored) {
    const a = byId.get(id);
    if (!a) return no("CHAIN_BROKEN", `delegation ${id} above delegation ${c.delegationId} is not stored`);
    if (a.revoked) return no("CHAIN_LINK_REVOKED", `delegation ${id} above delegation ${c.delegationId} is revoked, which invalidates everything below it`);
    if (a.cumulative === null || a.cumulative === undefined) continue;
    let max: bigint;
    try {
      max = toMinor(a.cumulative as number, a.currency);
    } catch {
      return no("DELEGATION_BUDGET_EXCEEDED", `delegation ${id} above delegation ${c.delegationId} has a cumulative maximum that is not a valid amount`);
    }
    const fmt = (v: bigint) => `${formatMinor(v, a.currency)} ${a.currency}`;
    // The action's amount is in the chain's currency: an ancestor in another cannot add it.
    const spent = a.currency === c.currency ? run.spentUnder(id, a.spend, a.currency) : undefined;
    const check = checkBudget(max, spent, c.amountMinor);
    if (check === "unknown") {
      return no(
        "DELEGATION_BUDGET_EXCEEDED",
        `the spend under delegation ${id} (above delegation ${c.delegationId}) includes other currencies than ${a.currency}, which cannot be added to its cumulative maximum without a rate`,
      );
    }
    if (check === "exceeded") {
      return no(
        "DELEGATION_BUDGET_EXCEEDED",
        `${fmt(c.amountMinor)} on top of ${fmt(spent ?? 0n)} spent under delegation ${id} and the delegations below it exceeds its cumulative maximum ${fmt(max)}`,
      );
    }
  }
  return undefined;
}

/** A decided spend: its result, or the entry to write (its result is completed once written). */
type Decided = { result: SpendResult } | { write: { entry: LedgerEntry; totals: Totals } };

/** Decides one spend of the batch against the read `r` and the batch's earlier spends (the order of checks of the module comment). */
function decide(s: AllowedSpend, r: ReadRow, run: Running, slots?: { agent: string | undefined; of: readonly PeriodSlot[] }): Decided {
  const d = s.limits?.delegation;
  if (!r.agreement_found) return { result: refused("NO_ACTIVE_AGREEMENT", s) };
  if (d && r.delegation_id !== d.delegationId)
    throw new RecordStoreError("SPEND_INVALID", `agreement ${s.agreementId} is not bound to delegation ${d.delegationId}`);
  let blocked: SpendRefusal | null = null;
  if (r.revoked) blocked = "AGREEMENT_REVOKED";
  else if (r.status !== "active" && r.status !== "accepted") blocked = "NO_ACTIVE_AGREEMENT";
  else if (r.intent_currency === null) blocked = "INTENT_NOT_FOUND";
  else if (r.intent_currency !== s.currency)
    throw new RecordStoreError("SPEND_INVALID", `intent ${s.intentId} is in ${r.intent_currency}, the spend in ${s.currency}`);

  const earlier = run.entries.get(key(s.agreementId, s.actionId));
  if (r.imported) {
    return {
      result: {
        recorded: false,
        reason: "ACTION_REUSED",
        message: `action ${s.actionId} is in the ledger imported with agreement ${s.agreementId}; its action_id is spent and never matched by a new request`,
        entry: r.existing,
      },
    };
  }
  if (r.released && r.existing) {
    return {
      result: {
        recorded: false,
        reason: "ACTION_RELEASED",
        message: `action ${s.actionId} was allowed and its spend released (outcome failed); it is never spent again`,
        entry: r.existing,
      },
    };
  }
  if (r.existing) {
    if (!sameRequest(s, r.existing, r.existing_request_hash)) return { result: reused(s, r.existing) };
    return { result: { recorded: true, replayed: true, entry: r.existing } };
  }
  if (earlier) {
    if (!sameRequest(s, earlier.entry, earlier.spend.decision?.requestHash ?? null)) return { result: reused(s, earlier.entry) };
    return { result: { recorded: true, replayed: true, entry: earlier.entry } };
  }
  if (s.decision && (r.decided || run.decided.has(key(s.decision.agentId, s.actionId)))) {
    return { result: { recorded: false, reason: "ACTION_DECIDED", message: `an answer for action ${s.actionId} is already stored` } };
  }
  if (blocked) return { result: refused(blocked, s) };
  if (r.delegation_revoked) return { result: refused("DELEGATION_REVOKED", s) };
  if (r.pushed_revocation) return { result: refused("AGREEMENT_REVOKED", s) };
  const t = run.totals(s, r);
  const l = s.limits;
  const within = (limit: bigint | undefined, spent: bigint | undefined, amount: bigint) =>
    limit === undefined || checkBudget(limit, spent, amount) === "within";
  if (!within(l?.sliceMinor, t.intentSpent, s.amountMinor) || !within(l?.parentCumulativeMinor, t.totalSpent, s.amountMinor))
    return { result: refused("CUMULATIVE_BUDGET_EXCEEDED", s, t) };
  if (d && !within(d.cumulativeMinor, t.delegationSpent, d.amountMinor ?? s.amountMinor)) return { result: refused("DELEGATION_BUDGET_EXCEEDED", s, t) };
  const chain = chainRefusal(s, r, run);
  if (chain) return { result: chain };
  // Each owner's windows, computed once when the batch was read (keyed by the agreement's agent, as read).
  const ag = r.agreement_agent ?? "";
  const periods = l?.periods ?? [];
  const slotsOf =
    slots && slots.agent === ag && slots.of.length === periods.length
      ? slots.of
      : periods.map((p) => periodSlot(ownerAgent(ag, p), ownerKey(ag, s.agreementId, s.intentId, p), p.currency, p.periods, Date.parse(s.at)));
  for (const [j, p] of periods.entries()) {
    // A delegation's windows: the agreement's delegation's or a stored ancestor's (its row is
    // locked root first; the stored chain was checked above), which counts its subtree's spend.
    if (p.owner === "delegation" && r.delegation_id !== p.delegationId && !(r.delegation_chain ?? []).includes(p.delegationId ?? ""))
      throw new RecordStoreError("SPEND_INVALID", `agreement ${s.agreementId} is not bound to delegation ${p.delegationId ?? ""} nor below it`);
    const what = p.owner === "intent" ? `intent ${s.intentId}` : `delegation ${p.delegationId ?? ""}`;
    const no = run.periods.refusal(slotsOf[j] as PeriodSlot, p, what);
    if (no) return { result: { recorded: false, ...no } };
  }

  const head = run.heads.get(s.agreementId) ?? { sequence: r.ledger_sequence ?? 0, head: r.ledger_head ?? undefined };
  const entry = nextLedgerEntry(head, {
    action_id: s.actionId,
    at: s.at,
    currency: s.currency,
    outcome: "allowed",
    amount: entryAmount(s.amountMinor, s.currency),
    intent_id: s.intentId,
    idempotency_key: s.actionId,
  });
  run.add(s, r, entry);
  for (const [j, p] of periods.entries()) run.periods.add(slotsOf[j] as PeriodSlot, s.agreementId, s.actionId, p, s.at);
  return { write: { entry, totals: t } };
}

/**
 * Round trip 1: BEGIN, the locks (delegation rows by depth then id, then agreement rows in id
 * order: the lock order of ./index.ts, the same in every batch so no two batches deadlock),
 * and the read, which starts after the locks are held.
 */
async function lockAndRead(
  client: PoolClient,
  spends: readonly AllowedSpend[],
  hourCountersFrom: number | undefined,
): Promise<{ rows: ReadRow[]; periods: RunningPeriods; slots: { agent: string | undefined; of: PeriodSlot[] }[] }> {
  const agents = await agentsOf(client, spends);
  const input = spends.map((s, i): SpendReadInput => ({
    i,
    ag: agents[i] ?? null,
    did: s.limits?.delegation?.delegationId ?? s.limits?.chain?.delegationId ?? s.limits?.periods?.find((p) => p.owner === "delegation")?.delegationId ?? null,
    agreement_id: s.agreementId,
    intent_id: s.intentId,
    action_id: s.actionId,
    currency: s.currency,
    agent_id: s.decision?.agentId ?? null,
    parent: s.limits?.parentCumulativeMinor !== undefined,
    del: s.limits?.delegation !== undefined,
    rev: s.revision ?? null,
  }));
  // Locked by writ_spend_read in the lock order (depth, then id), whatever the order here.
  const delegations = sorted(
    spends.flatMap((s) => [
      ...(s.limits?.delegation ? [s.limits.delegation.delegationId] : []),
      ...(s.limits?.chain ? [s.limits.chain.delegationId, ...s.limits.chain.ancestorIds] : []),
      ...(s.limits?.periods ?? []).flatMap((p) => (p.owner === "delegation" && p.delegationId !== undefined ? [p.delegationId] : [])),
    ]),
  );
  // The period windows are read in the same round trip, after the locks (./periods.ts).
  // Each spend's windows per owner, computed once: read here, checked and counted by `decide`.
  const slots = spends.map((s, i) => {
    const atMs = Date.parse(s.at);
    const ag = agents[i] ?? "";
    return (s.limits?.periods ?? []).map((p) => periodSlot(ownerAgent(ag, p), ownerKey(ag, s.agreementId, s.intentId, p), p.currency, p.periods, atMs));
  });
  const windows = windowInputs(slots.flat());
  let sql = lockAndReadSql(delegations, sorted(spends.map((s) => s.agreementId)), input);
  if (windows.inputs.length > 0) sql += `;\n${periodReadSql(windows.inputs)}`;
  const results = (await client.query(sql)) as unknown as QueryResult[];
  const periodRows = windows.inputs.length > 0 ? ((results.pop() as QueryResult<PeriodReadRow>).rows as PeriodReadRow[]) : [];
  // By place (on a Citus cluster the rows come agent by agent: sql/functions/writ_spend_read_citus.sql).
  const rows = (results[results.length - 1] as QueryResult<ReadRow>).rows.sort((x, y) => x.i - y.i);
  return { rows, periods: new RunningPeriods(usageByKey(windows.keys, periodRows), hourCountersFrom), slots: slots.map((of, i) => ({ agent: agents[i], of })) };
}

/**
 * The agent of each spend's agreement: its `agentId`, else its decision's agent, else read by
 * the agreement id (a statement only when some spend names neither).
 */
async function agentsOf(client: PoolClient, spends: readonly AllowedSpend[]): Promise<(string | undefined)[]> {
  const given = spends.map((s) => s.agentId ?? s.decision?.agentId);
  const missing = spends.filter((_, i) => given[i] === undefined).map((s) => s.agreementId);
  if (missing.length === 0) return given;
  const { rows } = await client.query<{ agreement_id: string; agent_id: string }>(
    "SELECT agreement_id, agent_id FROM agreements WHERE agreement_id = ANY($1::text[])",
    [missing],
  );
  const byId = new Map(rows.map((r) => [r.agreement_id, r.agent_id]));
  return spends.map((s, i) => given[i] ?? byId.get(s.agreementId));
}

/** Round trip 2: the writes of the decided spends (when any) and COMMIT. Returns the keys of the answers stored. */
async function writeAndCommit(
  client: PoolClient,
  spends: readonly AllowedSpend[],
  read: readonly ReadRow[],
  decided: readonly (Decided | undefined)[],
  periods: PeriodWrites,
): Promise<Set<string>> {
  const rows: SpendWriteRow[] = [];
  spends.forEach((s, i) => {
    const d = decided[i];
    if (!d || !("write" in d)) return;
    const dec = s.decision;
    const ag = read[i]?.agreement_agent;
    if (ag == null) return; // not reached: a spend is written only when its agreement was found
    rows.push({ ag, a: s.agreementId, e: d.write.entry, m: s.amountMinor.toString(), ...(dec ? { g: dec.agentId, h: dec.requestHash, d: dec.body } : {}) });
  });
  if (rows.length === 0) {
    await client.query("COMMIT");
    return new Set();
  }
  // Spends under a stored ancestor raise its running total, under its lock (./chain-spend.ts).
  const chain = spends.flatMap((s, i): ChainSpendRow[] =>
    decided[i] && "write" in (decided[i] as Decided) && (read[i]?.ancestors ?? []).length > 0
      ? [{ ag: read[i]?.agreement_agent as string, a: s.agreementId, c: s.currency, m: s.amountMinor.toString() }]
      : [],
  );
  const results = (await client.query(writeAndCommitSql(rows, periods, chain.length > 0 ? chainSpendSql(chain) : undefined))) as unknown as QueryResult<{
    agent_id: string;
    action_id: string;
  }>[];
  return new Set((results[0] as QueryResult<{ agent_id: string; action_id: string }>).rows.map((r) => key(r.agent_id, r.action_id)));
}

/** The result of one spend of a batch: its SpendResult, or the error that refused it alone (SPEND_INVALID). */
export type SpendBatchResult = SpendResult | { failed: RecordStoreError };

/** The batch's transaction on `client` (see `recordAllowedSpends`). */
async function runBatch(client: PoolClient, spends: readonly AllowedSpend[], hourCountersFrom: number | undefined): Promise<SpendBatchResult[]> {
  const { rows, periods, slots } = await lockAndRead(client, spends, hourCountersFrom);
  const run = new Running();
  run.periods = periods;
  const failed = new Map<number, RecordStoreError>();
  const decided = spends.map((s, i): Decided | undefined => {
    try {
      return decide(s, rows[i] as ReadRow, run, slots[i]);
    } catch (e) {
      if (!(e instanceof RecordStoreError)) throw e;
      failed.set(i, e);
      return undefined;
    }
  });
  const stored = await writeAndCommit(client, spends, rows, decided, run.periods.writes());
  return spends.map((s, i): SpendBatchResult => {
    const d = decided[i];
    if (!d) return { failed: failed.get(i) as RecordStoreError };
    if ("result" in d) return d.result;
    const del = s.limits?.delegation;
    const { entry, totals } = d.write;
    return {
      recorded: true,
      replayed: false,
      entry,
      intentSpentMinor: totals.intentSpent + s.amountMinor,
      decisionStored: s.decision !== undefined && stored.has(key(s.decision.agentId, s.actionId)),
      ...(del && totals.delegationSpent !== undefined ? { delegationSpentMinor: totals.delegationSpent + (del.amountMinor ?? s.amountMinor) } : {}),
    };
  });
}

/**
 * Records several allowed spends in ONE transaction (the group commit of
 * src/verify/pipeline/spend-writer.ts; see the module comment): results in the order of
 * `spends`. A spend refused by the batch's earlier spends (its budget taken) is refused as if
 * they had committed before it; one that is malformed (SPEND_INVALID) gets `{failed}` and
 * writes nothing, without failing the others. Throws only when the transaction failed, and
 * then nothing of it was written.
 */
export async function recordAllowedSpends(pool: Pool, spends: readonly AllowedSpend[], opts: SpendOptions = {}): Promise<SpendBatchResult[]> {
  const out: (SpendBatchResult | undefined)[] = spends.map((s) => {
    try {
      checkInput(s);
      entryAmount(s.amountMinor, s.currency);
      return undefined;
    } catch (e) {
      if (e instanceof RecordStoreError) return { failed: e };
      throw e;
    }
  });
  const valid = spends.filter((_, i) => out[i] === undefined);
  if (valid.length === 0) return out as SpendBatchResult[];
  const started = process.hrtime.bigint();
  try {
    const results = await withTransaction(pool, (client) => runBatch(client, valid, opts.hourCountersFrom), { selfBegin: true, selfCommit: true });
    let j = 0;
    return out.map((o) => o ?? (results[j++] as SpendBatchResult));
  } finally {
    opts.observe?.(Number(process.hrtime.bigint() - started) / 1e9);
  }
}

/** Records one allowed spend (see the module comment): a batch of one. Throws RecordStoreError SPEND_INVALID for a malformed request. */
export async function recordAllowedSpend(pool: Pool, spend: AllowedSpend, opts: SpendOptions = {}): Promise<SpendResult> {
  const [r] = await recordAllowedSpends(pool, [spend], opts);
  if (!r) throw new Error("recordAllowedSpends returned no result");
  if ("failed" in r) throw r.failed;
  return r;
}
