/**
 * Limits per period in the spend transaction (./spend.ts): which windows a batch reads, how a
 * spend is checked against them (the core's rule: src/core/money/periods.ts, `windowAt` and
 * `checkPeriod`, at the spend's `at`, the service's decision time) and what a recorded spend
 * writes (period_events and the period_spend counters, migrations/0430_period_limits.sql).
 * A spend is decided against what the read found plus the batch's earlier spends, as the
 * other budgets are. Owners: an intent (["intent", agent_id, agreement_id, intent_id], under
 * the agreement's row lock) and a delegation (["delegation", agent_id, delegation_id], under its
 * row lock); agent_id is the agreement's, which is its delegation's. Every row is keyed by that
 * agent (agent_id first, docs/scale.md "Keys"), and an owner names it: an agreement or delegation
 * id alone never identifies a counter.
 * The read API's budget view reads the same windows with `readPeriodUsage`.
 *
 * Rolling windows are read in bounded time (migrations/0600_period_hour_buckets.sql): once a
 * rolling window of an owner holds HOUR_COUNTERS_FROM payments (this one included), a spend of
 * that owner is also counted in the counter of its UTC hour (window kind `bucket@PT1H`, raised
 * and released as a calendar window's; its event is `bucketed`), and a rolling window (t - D, t]
 * is the hour counters after the hour holding t - D, plus that hour's bucketed events after
 * t - D, plus the owner's events not counted in an hour (fewer than HOUR_COUNTERS_FROM in any
 * window: written while its windows held fewer, or before hour counters, or while it had no
 * rolling limit). An owner whose windows stay below that pays no hour counter.
 */
import type { Queryable } from "../pool.js";
import {
  checkPeriod,
  formatMinor,
  periodName,
  windowAt,
  type PreparedPeriodLimit,
  type PreparedPeriods,
  type WindowAt,
  type WindowUsage,
} from "../../core/money/index.js";
import { periodReadSql, type PeriodCounterRow, type PeriodReadInput, type PeriodReadRow, type PeriodWriteRow, type PeriodWrites } from "./spend-sql.js";

/** Period limits of one owner a spend must stay within (amount in the owner's currency). */
export interface SpendPeriods {
  /** The intent of the spend (`intent`) or a delegation (`delegation`, with its id; its row is locked). */
  owner: "intent" | "delegation";
  delegationId?: string;
  /** A delegation owner's agent when it is not the agreement's (a stored ancestor granted to another agent): its windows are that agent's rows, shared by every agent below it. */
  agentId?: string;
  currency: string;
  /** The spend's amount in `currency` (minor units). */
  amountMinor: bigint;
  periods: PreparedPeriods;
}

/** The agent whose rows hold `p`'s windows: the agreement's agent `agentId`, or a stored ancestor's own agent. */
export function ownerAgent(agentId: string, p: Pick<SpendPeriods, "owner" | "agentId">): string {
  return p.owner === "delegation" && p.agentId !== undefined ? p.agentId : agentId;
}

/** The owner key of the counters: an intent of the agreement of agent `agentId`, or a delegation under its own agent (`ownerAgent`). */
export function ownerKey(agentId: string, agreementId: string, intentId: string, p: Pick<SpendPeriods, "owner" | "delegationId" | "agentId">): string {
  return JSON.stringify(p.owner === "intent" ? ["intent", agentId, agreementId, intentId] : ["delegation", ownerAgent(agentId, p), p.delegationId ?? ""]);
}

/** One owner's windows to read: `agentId` is the owner's agent (the key of its rows), `owner` its `ownerKey`. */
export interface PeriodSpec {
  agentId: string;
  owner: string;
  currency: string;
  periods: PreparedPeriods;
  atMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** ISO text of calendar window starts, which recur from spend to spend (at most 1,024 kept). */
const startIsos = new Map<number, string>();
function isoStart(ms: number): string {
  let t = startIsos.get(ms);
  if (t === undefined) {
    if (startIsos.size >= 1024) startIsos.clear();
    t = iso(ms);
    startIsos.set(ms, t);
  }
  return t;
}

/** The window kind of the hour counters of rolling windows (see the module comment). */
export const HOUR_BUCKET_KIND = "bucket@PT1H";
/** Default of WRIT_PERIOD_HOUR_COUNTERS_FROM: from how many payments in a rolling window (the spend's own included) its owner's spends are counted in their hours. */
export const HOUR_COUNTERS_FROM = 16;
const HOUR_MS = 3_600_000;
/** The start of the UTC hour holding `ms`. */
const hourOf = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/**
 * The key of a window of `owner` in `currency`, in memory only (the batch's maps): the
 * window's kind and its start (a calendar window) or bound (a rolling one) as epoch ms, so a
 * key costs one string concatenation (no JSON, no date formatting). NUL never occurs in an
 * owner key (JSON text), a currency or a kind.
 */
function windowKey(owner: string, currency: string, w: WindowAt): string {
  return `${owner}\u0000${currency}\u0000${w.kind}\u0000${"since" in w ? `>${w.since}` : w.start}`;
}

/** One window of a spend's owner: its limit, the window at the spend's instant and its key. */
export interface SlotWindow {
  limit: PreparedPeriodLimit;
  window: WindowAt;
  key: string;
}

/**
 * One owner's windows at one instant, computed once per spend (`periodSlot`): the read, the
 * check and the counting of the spend transaction all use these, so each window is computed
 * and keyed once per spend rather than once per use.
 */
export interface PeriodSlot {
  /** The owner's agent (the key of its rows). */
  agentId: string;
  owner: string;
  currency: string;
  timeZone: string;
  atMs: number;
  windows: SlotWindow[];
  /** Whether some window is rolling (only then are the batch's earlier spends listed by instant). */
  rolling: boolean;
  /** With a rolling window: the hour counter the spend is counted in once the window is full enough (its start and key). */
  bucket?: { start: number; key: string };
}

/** The windows of `periods` for `owner` in `currency` at `atMs` (see PeriodSlot). */
export function periodSlot(agentId: string, owner: string, currency: string, periods: PreparedPeriods, atMs: number): PeriodSlot {
  let rolling = false;
  const windows = periods.limits.map((limit): SlotWindow => {
    const window = windowAt(limit, periods.timeZone, atMs);
    if ("since" in window) rolling = true;
    return { limit, window, key: windowKey(owner, currency, window) };
  });
  const slot: PeriodSlot = { agentId, owner, currency, timeZone: periods.timeZone, atMs, windows, rolling };
  if (rolling) {
    const start = hourOf(atMs);
    slot.bucket = { start, key: windowKey(owner, currency, { kind: HOUR_BUCKET_KIND, start }) };
  }
  return slot;
}

/** One window as read. */
export interface ReadWindow {
  owner: string;
  currency: string;
  window: WindowAt;
  usage: WindowUsage;
}

/** The windows to read for `specs` (deduplicated by key; a spec that is a PeriodSlot is not recomputed) and the keys in input order. */
export function windowInputs(specs: readonly (PeriodSpec | PeriodSlot)[]): {
  inputs: PeriodReadInput[];
  keys: string[];
} {
  const inputs: PeriodReadInput[] = [];
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const sp of specs) {
    const slot = "windows" in sp ? sp : periodSlot(sp.agentId, sp.owner, sp.currency, sp.periods, sp.atMs);
    for (const { window: w, key: k } of slot.windows) {
      if (seen.has(k)) continue;
      seen.add(k);
      keys.push(k);
      const input: PeriodReadInput = { k: inputs.length, g: slot.agentId, o: slot.owner, c: slot.currency, w: w.kind };
      if ("since" in w) input.since = iso(w.since);
      else input.s = isoStart(w.start);
      inputs.push(input);
    }
  }
  return { inputs, keys };
}

/** The usage read per window key. */
export function usageByKey(keys: readonly string[], rows: readonly PeriodReadRow[]): Map<string, WindowUsage> {
  const out = new Map<string, WindowUsage>();
  for (const r of rows) {
    const k = keys[r.k];
    if (k === undefined) continue;
    const u: WindowUsage = { spentMinor: BigInt(r.spent), count: Number(r.payments) };
    if (r.oldest !== null) u.oldestMs = new Date(r.oldest).getTime();
    out.set(k, u);
  }
  return out;
}

/** Reads the usage of the windows of `specs` at their instants (the read API's budget view; outside the spend transaction). */
export async function readPeriodUsage(
  db: Queryable,
  specs: readonly PeriodSpec[],
): Promise<(limit: PreparedPeriodLimit, spec: Pick<PeriodSpec, "owner" | "currency" | "periods" | "atMs">) => WindowUsage> {
  const { inputs, keys } = windowInputs(specs);
  const rows = inputs.length > 0 ? (await db.query<PeriodReadRow>(periodReadSql(inputs))).rows : [];
  const usage = usageByKey(keys, rows);
  return (l, spec) => usage.get(windowKey(spec.owner, spec.currency, windowAt(l, spec.periods.timeZone, spec.atMs))) ?? { spentMinor: 0n, count: 0 };
}

/** A spend's period refusal. */
export interface PeriodRefusal {
  reason: "PERIOD_LIMIT_EXCEEDED" | "PERIOD_COUNT_EXCEEDED";
  message: string;
}

/**
 * The batch's period state: the read usage plus the batch's earlier spends (calendar windows
 * by key; rolling windows from the earlier spends' instants).
 */
export class RunningPeriods {
  /** What the batch's spends added per calendar window (by key), with the counter's row: its key columns, and whether the read found it. */
  private readonly added = new Map<string, WindowUsage & { row: Omit<PeriodCounterRow, "m" | "n"> }>();
  private readonly events: PeriodWriteRow[] = [];
  /** The batch's spends by owner and currency, with their instants (for rolling windows). */
  private readonly instants = new Map<string, { atMs: number; amountMinor: bigint }[]>();
  /** `hourCountersFrom`: see HOUR_COUNTERS_FROM (at least 1). */
  constructor(
    private readonly read: ReadonlyMap<string, WindowUsage>,
    private readonly hourCountersFrom = HOUR_COUNTERS_FROM,
  ) {}

  /** The usage of window `w` (key `k`) of `slot`: what the read found plus the batch's earlier spends. */
  usage(slot: PeriodSlot, w: WindowAt, k: string): WindowUsage {
    const base = this.read.get(k) ?? { spentMinor: 0n, count: 0 };
    if ("since" in w) {
      let spentMinor = base.spentMinor;
      let count = base.count;
      let oldestMs = base.oldestMs;
      for (const e of this.instants.get(`${slot.owner}\u0000${slot.currency}`) ?? []) {
        if (e.atMs <= w.since) continue;
        spentMinor += e.amountMinor;
        count++;
        if (oldestMs === undefined || e.atMs < oldestMs) oldestMs = e.atMs;
      }
      return { spentMinor, count, ...(oldestMs !== undefined ? { oldestMs } : {}) };
    }
    const a = this.added.get(k);
    return a ? { spentMinor: base.spentMinor + a.spentMinor, count: base.count + a.count } : base;
  }

  /** The first limit of `p` (its windows: `slot`) that one more payment of `p.amountMinor` breaks, as a refusal naming the period. */
  refusal(slot: PeriodSlot, p: SpendPeriods, what: string): PeriodRefusal | undefined {
    const fmt = (v: bigint) => `${formatMinor(v, p.currency)} ${p.currency}`;
    for (const { limit: l, window: w, key } of slot.windows) {
      const u = this.usage(slot, w, key);
      const broken = checkPeriod(l, u, p.amountMinor);
      if (broken === undefined) continue;
      const name = periodName(l, slot.timeZone);
      const resets =
        "end" in w && w.end !== undefined
          ? `; it resets at ${iso(w.end)}`
          : "since" in w && u.oldestMs !== undefined
            ? `; it frees up from ${iso(u.oldestMs + w.rollingMs)}`
            : "";
      if (broken === "count") {
        return {
          reason: "PERIOD_COUNT_EXCEEDED",
          message: `${u.count} payment(s) already counted in the ${name} under ${what}: one more exceeds its count limit ${String(l.count)}${resets}`,
        };
      }
      return {
        reason: "PERIOD_LIMIT_EXCEEDED",
        message: `${fmt(p.amountMinor)} on top of ${fmt(u.spentMinor)} spent in the ${name} under ${what} exceeds its limit ${fmt(l.amountMinor ?? 0n)}${resets}`,
      };
    }
    return undefined;
  }

  /** Counts a recorded spend of `p` in the windows of `slot`; returns its event row (also kept for `writes`). */
  add(slot: PeriodSlot, agreementId: string, actionId: string, p: SpendPeriods, at: string): PeriodWriteRow {
    const calendar: [string, string][] = [];
    const atMs = slot.atMs;
    // Until when a window can need the event (retention: src/store/retention.ts); undefined: for good.
    let keepUntil: number | undefined = atMs;
    // Its hour's counter too once a rolling window holds `hourCountersFrom` payments with it
    // (not read: inserted, or raised by the insert's conflict).
    const hourly =
      slot.bucket !== undefined && slot.windows.some(({ window: w, key }) => "since" in w && this.usage(slot, w, key).count + 1 >= this.hourCountersFrom);
    const windows: { window: WindowAt; key: string }[] =
      hourly && slot.bucket
        ? [...slot.windows, { window: { kind: HOUR_BUCKET_KIND, start: slot.bucket.start, end: slot.bucket.start + HOUR_MS }, key: slot.bucket.key }]
        : slot.windows;
    for (const { window: w, key } of windows) {
      if ("since" in w) {
        if (keepUntil !== undefined) keepUntil = Math.max(keepUntil, atMs + w.rollingMs);
        continue;
      }
      keepUntil = w.end === undefined || keepUntil === undefined ? undefined : Math.max(keepUntil, w.end);
      const start = isoStart(w.start);
      calendar.push([w.kind, start]);
      const a = this.added.get(key);
      if (a) {
        a.spentMinor += p.amountMinor;
        a.count++;
      } else {
        const row = { g: slot.agentId, o: slot.owner, c: slot.currency, w: w.kind, s: start, e: this.read.has(key) };
        this.added.set(key, { spentMinor: p.amountMinor, count: 1, row });
      }
    }
    if (slot.rolling) {
      const ek = `${slot.owner}\u0000${slot.currency}`;
      const list = this.instants.get(ek);
      if (list) list.push({ atMs, amountMinor: p.amountMinor });
      else this.instants.set(ek, [{ atMs, amountMinor: p.amountMinor }]);
    }
    const event: PeriodWriteRow = {
      g: slot.agentId,
      a: agreementId,
      x: actionId,
      o: slot.owner,
      c: p.currency,
      t: at,
      m: p.amountMinor.toString(),
      w: calendar,
      u: keepUntil === undefined ? null : iso(keepUntil),
      b: hourly,
    };
    this.events.push(event);
    return event;
  }

  /**
   * What `writ_period_write` takes for the spends counted so far: their events, and each
   * calendar window's counter once, raised by the batch's sum (a counter the read found is
   * raised in place; the rows are locked by their owners' locks, held since the read).
   */
  writes(): PeriodWrites {
    const counters: PeriodCounterRow[] = [];
    for (const { row: r, spentMinor, count } of this.added.values()) {
      counters.push({ g: r.g, o: r.o, c: r.c, w: r.w, s: r.s, e: r.e, m: spentMinor.toString(), n: count });
    }
    return { events: this.events, counters };
  }
}
