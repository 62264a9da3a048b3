/**
 * What verify knows of an agent, kept in memory between verifies (a FollowedCache,
 * ./followed-cache.ts): the agent's registry row, its live candidate agreements with their
 * ledger totals, and the times of its recent denials. A warm verify of a refusal then reads
 * nothing from Postgres, and an ALLOW only runs its spend transaction.
 *
 * Promises (docs/verify.md, "Caches"):
 * - A snapshot is dropped when Postgres announces a change of the agent, its agreements, their
 *   delegations or a lowered spend total (`writ_changes`, migrations/0100_change_notify.sql),
 *   and every snapshot is dropped when the LISTEN connection is lost or re-made; none is used
 *   while it is down. Revocations are not read from snapshots at all: the revocation index is
 *   checked on every verify.
 * - Spends of THIS process update its snapshots (`noteSpend`: the totals the spend
 *   transaction returned, never lower than kept). Spends of OTHER processes are not announced
 *   (they are the hot path): a kept total may be lower than the ledger's for at most
 *   `ttlMs`, which can only let an action reach the spend transaction, whose re-check under
 *   the agreement's lock refuses it with the same budget reason. A request carrying a
 *   `ledger_sequence` above the kept one is read afresh.
 * - Denials stored by this process are added as they are stored (`noteDenial`); those of other
 *   processes are counted from the last read, at most `ttlMs` old.
 */
import type { HashString } from "../../core/canonical/index.js";
import type { ActiveAgreementRow } from "../../store/agreements-read.js";
import type { AgentForVerify } from "../../store/agents.js";
import type { ChangeNotice } from "../../store/changes.js";
import type { Pool } from "pg";
import { carryPrepared } from "./candidates.js";
import { FollowedCache, type ChangeFeed } from "./followed-cache.js";
import { DENIAL_WINDOW_SECONDS, readAgentSnapshot } from "../../store/verify-reads.js";

/** Default lifetime of a snapshot, ms (WRIT_VERIFY_SNAPSHOT_TTL_MS). */
export const DEFAULT_SNAPSHOT_TTL_MS = 60_000;

/** What verify knows of one agent. */
export interface AgentSnapshot {
  /** The registered agent; undefined when there is none. */
  agent?: AgentForVerify;
  /** Live candidates (without records), with their totals. */
  candidates: readonly ActiveAgreementRow[];
  /** Times (epoch ms, the app's clock) of the agent's recent counted denials, oldest first. */
  denials: number[];
}

/** What a recorded spend tells a snapshot. */
export interface SpendNote {
  agreementId: string;
  intentId: string;
  sequence: number;
  entryHash: HashString;
  /** The intent's total after the spend. */
  intentSpentMinor: bigint;
  /** The delegation's total after the spend (its currency), when known. */
  delegation?: { delegationId: string; spentMinor: bigint };
}

/** A change feed that also carries change notices (a RevocationChannel). */
export interface ChangeNoticeFeed extends ChangeFeed {
  on(event: "connected" | "disconnected", fn: () => void): unknown;
  on(event: "changed", fn: (c: ChangeNotice) => void): unknown;
}

/** Options of AgentSnapshots. */
export interface AgentSnapshotsOptions {
  /** Lifetime of a snapshot, ms (0: every verify reads the agent). Default DEFAULT_SNAPSHOT_TTL_MS. */
  ttlMs?: number;
  /** Most snapshots kept (default 10,000). */
  maxEntries?: number;
  /** Clock of snapshot lifetimes, epoch ms (default Date.now). */
  clock?: () => number;
  /** The denied-attempt burst window, seconds (default DENIAL_WINDOW_SECONDS; WRIT_DENIED_ATTEMPT_WINDOW_SECONDS). */
  denialWindowSeconds?: number;
}

/** Denials within the burst window ending at `nowMs`. */
export function recentDenialCount(s: AgentSnapshot, nowMs: number, windowSeconds = DENIAL_WINDOW_SECONDS): number {
  const from = nowMs - windowSeconds * 1000;
  let n = 0;
  for (const t of s.denials) if (t > from) n++;
  return n;
}

/** The agents' snapshots of one process (see the module comment). */
export class AgentSnapshots {
  private readonly cache: FollowedCache<AgentSnapshot>;
  /** The burst window, seconds. */
  readonly denialWindowSeconds: number;

  constructor(opts: AgentSnapshotsOptions = {}) {
    this.denialWindowSeconds = opts.denialWindowSeconds ?? DENIAL_WINDOW_SECONDS;
    this.cache = new FollowedCache({ ttlMs: opts.ttlMs ?? DEFAULT_SNAPSHOT_TTL_MS, ...(opts.maxEntries !== undefined ? { maxEntries: opts.maxEntries } : {}), ...(opts.clock ? { clock: opts.clock } : {}) });
  }

  /** Follows `feed`'s notices (before this, nothing is kept). */
  follow(feed: ChangeNoticeFeed): this {
    this.cache.follow(feed);
    feed.on("changed", (c) => {
      if (c.kind === "agent") this.cache.invalidate(c.agentId);
    });
    return this;
  }

  /** True when a fresh snapshot of `agentId` is kept (a verify of it would read nothing). */
  has(agentId: string): boolean {
    return this.cache.get(agentId) !== undefined;
  }

  /** Snapshots kept. */
  get size(): number {
    return this.cache.size;
  }

  /** Reads answered from memory (`hits`) and from Postgres (`misses`) since start. */
  get reads(): { hits: number; misses: number } {
    return { hits: this.cache.hits, misses: this.cache.misses };
  }

  /**
   * The snapshot of `agentId`: the kept one, or one read now (`fresh` forces the read).
   * `nowMs` (the verify's clock) places the denials read.
   */
  async read(pool: Pool, agentId: string, nowMs: number, opts: { fresh?: boolean } = {}): Promise<AgentSnapshot> {
    if (opts.fresh) this.cache.invalidate(agentId);
    return this.cache.load(agentId, async () => {
      const r = await readAgentSnapshot(pool, agentId, this.denialWindowSeconds);
      return { ...(r.agent ? { agent: r.agent } : {}), candidates: r.candidates, denials: r.denialAgesMs.map((age) => nowMs - age) };
    });
  }

  /** A denial of `agentId` at `atMs` was stored. */
  noteDenial(agentId: string, atMs: number): void {
    this.cache.update(agentId, (s) => {
      const from = atMs - this.denialWindowSeconds * 1000;
      return { ...s, denials: [...s.denials.filter((t) => t > from), atMs] };
    });
  }

  /** A spend of `agentId` was recorded (see the module comment). */
  noteSpend(agentId: string, n: SpendNote): void {
    this.cache.update(agentId, (s) => ({ ...s, candidates: s.candidates.map((row) => withSpend(row, n)) }));
  }

  /** Drops the snapshot of `agentId` (its next verify reads Postgres): after a write this process made that lowers a total. */
  forget(agentId: string): void {
    this.cache.invalidate(agentId);
  }

  /** Drops every snapshot. */
  clear(): void {
    this.cache.clear();
  }
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** `row` with a spend applied: totals never go down, the head only forward. */
function withSpend(row: ActiveAgreementRow, n: SpendNote): ActiveAgreementRow {
  let out = row;
  if (row.agreementId === n.agreementId && n.sequence > row.ledgerSequence) {
    const spent = new Map(row.spent);
    spent.set(n.intentId, max(spent.get(n.intentId) ?? 0n, n.intentSpentMinor));
    out = { ...row, ledgerSequence: n.sequence, ledgerHead: n.entryHash, spent };
  }
  const d = row.delegation;
  if (n.delegation && d && d.delegationId === n.delegation.delegationId && d.spentMinor !== undefined && n.delegation.spentMinor > d.spentMinor) {
    out = { ...out, delegation: { ...d, spentMinor: n.delegation.spentMinor } };
  }
  if (out !== row) carryPrepared(row, out);
  return out;
}
