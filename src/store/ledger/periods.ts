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
import { periodReadSql, type PeriodReadInput, type PeriodReadRow, type PeriodWriteRow } from "./spend-sql.js";

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

/** The read key of a window of `owner` in `currency`. */
function windowKey(owner: string, currency: string, w: WindowAt): string {
  return JSON.stringify([owner, currency, w.kind, "since" in w ? `>${iso(w.since)}` : iso(w.start)]);
}

/** One window as read. */
export interface ReadWindow {
  owner: string;
  currency: string;
  window: WindowAt;
  usage: WindowUsage;
}

/** The windows to read for `specs` (deduplicated by key) and the keys in input order. */
export function windowInputs(specs: readonly PeriodSpec[]): {
  inputs: PeriodReadInput[];
  keys: string[];
  windows: Map<string, { owner: string; currency: string; window: WindowAt }>;
} {
  const inputs: PeriodReadInput[] = [];
  const keys: string[] = [];
  const windows = new Map<string, { owner: string; currency: string; window: WindowAt }>();
  for (const sp of specs) {
    for (const l of sp.periods.limits) {
      const w = windowAt(l, sp.periods.timeZone, sp.atMs);
      const k = windowKey(sp.owner, sp.currency, w);
      if (windows.has(k)) continue;
      windows.set(k, { owner: sp.owner, currency: sp.currency, window: w });
      keys.push(k);
      inputs.push({
        k: inputs.length,
        g: sp.agentId,
        o: sp.owner,
        c: sp.currency,
        w: w.kind,
        ...("since" in w ? { since: iso(w.since) } : { s: iso(w.start) }),
      });
    }
  }
  return { inputs, keys, windows };
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
  private readonly added = new Map<string, WindowUsage>();
  private readonly events = new Map<string, { atMs: number; amountMinor: bigint }[]>();
  constructor(private readonly read: ReadonlyMap<string, WindowUsage>) {}

  usage(owner: string, currency: string, w: WindowAt): WindowUsage {
    const k = windowKey(owner, currency, w);
    const base = this.read.get(k) ?? { spentMinor: 0n, count: 0 };
    if ("since" in w) {
      let spentMinor = base.spentMinor;
      let count = base.count;
      let oldestMs = base.oldestMs;
      for (const e of this.events.get(JSON.stringify([owner, currency])) ?? []) {
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

  /** The first limit of `p` that one more payment of `p.amountMinor` at `atMs` breaks, as a refusal naming the period. */
  refusal(owner: string, p: SpendPeriods, atMs: number, what: string): PeriodRefusal | undefined {
    const fmt = (v: bigint) => `${formatMinor(v, p.currency)} ${p.currency}`;
    for (const l of p.periods.limits) {
      const w = windowAt(l, p.periods.timeZone, atMs);
      const u = this.usage(owner, p.currency, w);
      const broken = checkPeriod(l, u, p.amountMinor);
      if (broken === undefined) continue;
      const name = periodName(l, p.periods.timeZone);
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

  /** Counts a recorded spend; returns the row `writ_period_write` takes. */
  add(agentId: string, agreementId: string, actionId: string, owner: string, p: SpendPeriods, at: string, atMs: number): PeriodWriteRow {
    const calendar: [string, string][] = [];
    let rolling = false;
    // Until when a window can need the event (retention: src/store/retention.ts); undefined: for good.
    let keepUntil: number | undefined = atMs;
    for (const l of p.periods.limits) {
      const w = windowAt(l, p.periods.timeZone, atMs);
      if ("since" in w) {
        rolling = true;
        if (keepUntil !== undefined) keepUntil = Math.max(keepUntil, atMs + w.rollingMs);
        continue;
      }
      keepUntil = w.end === undefined || keepUntil === undefined ? undefined : Math.max(keepUntil, w.end);
      calendar.push([w.kind, iso(w.start)]);
      const k = windowKey(owner, p.currency, w);
      const a = this.added.get(k) ?? { spentMinor: 0n, count: 0 };
      this.added.set(k, { spentMinor: a.spentMinor + p.amountMinor, count: a.count + 1 });
    }
    if (rolling) {
      const ek = JSON.stringify([owner, p.currency]);
      const list = this.events.get(ek) ?? [];
      list.push({ atMs, amountMinor: p.amountMinor });
      this.events.set(ek, list);
    }
    return {
      g: agentId,
      a: agreementId,
      x: actionId,
      o: owner,
      c: p.currency,
      t: at,
      m: p.amountMinor.toString(),
      w: calendar,
      u: keepUntil === undefined ? null : iso(keepUntil),
    };
  }
}
