/**
 * The one candidate cache of verify: what verify knows of an agent between verifies, down to
 * the candidates it evaluates. Per agent (a FollowedCache, ../caches/followed-cache.ts): its
 * registry row, its live candidate agreements with their ledger totals, each with the
 * candidate prepared for it once it was, and the times of its recent denials. Underneath, the
 * prepared records by version (../caches/record-cache.ts, shared by every agent: one
 * delegation may bind many agreements, and a sub-delegation's chain is read through it too).
 * A warm verify of a refusal then reads nothing from Postgres, and an ALLOW only runs its
 * spend transaction. The carry-over of a prepared candidate after a spend and the stamp of
 * each use's time are this module's own business.
 *
 * Promises (docs/verify.md, "Caches"):
 * - An agent's entry is dropped when Postgres announces a change of the agent, its agreements,
 *   their delegations or a lowered spend total (`writ_changes`, migrations/0100_change_notify.sql),
 *   and every entry is dropped when the LISTEN connection is lost or re-made; none is used
 *   while it is down. Revocations are not read from here at all: the revocation index is
 *   checked on every verify.
 * - Spends of THIS process update the entry (`noteSpend`: the totals the spend transaction
 *   returned, never lower than kept). Spends of OTHER processes are not announced (they are
 *   the hot path): a kept total may be lower than the ledger's for at most `ttlMs`, which can
 *   only let an action reach the spend transaction, whose re-check under the agreement's lock
 *   refuses it with the same budget reason. A request carrying a `ledger_sequence` above the
 *   kept one is read afresh (`candidates`, `seenSequence`).
 * - Denials stored by this process are added as they are stored (`noteDenial`); those of other
 *   processes are counted from the last read, at most `ttlMs` old.
 * - Candidates: records are fetched only for record-cache misses (../caches/candidates.ts).
 *   A candidate prepared for a row is kept with that row in the entry; rows are replaced,
 *   never changed, when their totals or records change. After a spend of this process the
 *   candidate is carried over to the new row, which differs from the old in its totals only
 *   (the same agreement revision and delegation generation), with those totals overlaid:
 *   exactly what preparing the new row from the record cache would give, so the next verify
 *   neither looks records up nor awaits them. A row never prepared is prepared as usual. Every use stamps the candidate with its own
 *   time (`ledgerAsOfMs`: the database is the system of record, and the entry follows it).
 */
import type { HashString } from "../../core/canonical/index.js";
import { type ActiveAgreementRow, type AgentForVerify, type ChangeNotice, DENIAL_WINDOW_SECONDS, readAgentSnapshot } from "../../store/index.js";
import type { Pool } from "pg";
import { prepareCandidates, totalsOf, type VerifyCandidate } from "../caches/candidates.js";
import { FollowedCache, type ChangeFeed } from "../caches/followed-cache.js";
import { withLedgerTotals } from "../caches/overlay.js";
import { RecordCache } from "../caches/record-cache.js";

/** Default lifetime of an agent's entry, ms (WRIT_VERIFY_SNAPSHOT_TTL_MS). */
export const DEFAULT_SNAPSHOT_TTL_MS = 60_000;

/** One live candidate row of an agent, and the candidate prepared for it (once it was). */
interface Slot {
  readonly row: ActiveAgreementRow;
  prepared?: VerifyCandidate;
}

/** What verify knows of one agent (see the module comment). */
export interface AgentSnapshot {
  /** The registered agent; undefined when there is none. */
  readonly agent?: AgentForVerify;
  /** Live candidates (rows without records, with their totals), and what was prepared for them. */
  readonly slots: readonly Slot[];
  /** Times (epoch ms, the app's clock) of the agent's recent counted denials, oldest first. */
  readonly denials: readonly number[];
}

/** What a recorded spend tells the cache. */
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
  on(event: "connected" | "disconnected" | "changes-reset", fn: () => void): unknown;
  on(event: "changed", fn: (c: ChangeNotice) => void): unknown;
}

/** Options of CandidateCache. */
export interface CandidateCacheOptions {
  /** Lifetime of an agent's entry, ms (0: every verify reads the agent). Default DEFAULT_SNAPSHOT_TTL_MS. */
  ttlMs?: number;
  /** Most agents kept (default 10,000). */
  maxEntries?: number;
  /** Most prepared records kept (default: two per agent kept, an agreement and its delegation). */
  maxRecords?: number;
  /** Clock of entry lifetimes, epoch ms (default Date.now). */
  clock?: () => number;
  /** The denied-attempt burst window, seconds (default DENIAL_WINDOW_SECONDS; WRIT_DENIED_ATTEMPT_WINDOW_SECONDS). */
  denialWindowSeconds?: number;
}

/** The candidates of an agent for one verify, and its denials within the burst window. */
export interface AgentCandidates {
  candidates: VerifyCandidate[];
  recentDenials: number;
}

/** The candidate cache of one process (see the module comment). */
export class CandidateCache {
  private readonly agents: FollowedCache<AgentSnapshot>;
  /** Prepared records by version (also read by a sub-delegation's stored chain). */
  readonly records: RecordCache;
  /** The burst window, seconds. */
  readonly denialWindowSeconds: number;

  constructor(opts: CandidateCacheOptions = {}) {
    this.denialWindowSeconds = opts.denialWindowSeconds ?? DENIAL_WINDOW_SECONDS;
    const maxEntries = opts.maxEntries ?? 10_000;
    this.agents = new FollowedCache({ ttlMs: opts.ttlMs ?? DEFAULT_SNAPSHOT_TTL_MS, maxEntries, ...(opts.clock ? { clock: opts.clock } : {}) });
    this.records = new RecordCache({ maxEntries: opts.maxRecords ?? 2 * maxEntries });
  }

  /** Follows `feed`'s notices (before this, nothing is kept). */
  follow(feed: ChangeNoticeFeed): this {
    this.agents.follow(feed);
    feed.on("changed", (c) => {
      if (c.kind === "agent") this.agents.invalidate(c.agentId);
    });
    return this;
  }

  /** True when a fresh entry of `agentId` is kept (a verify of it would read nothing). */
  has(agentId: string): boolean {
    return this.agents.get(agentId) !== undefined;
  }

  /** Agents kept. */
  get size(): number {
    return this.agents.size;
  }

  /** Agent reads answered from memory (`hits`) and from Postgres (`misses`) since start. */
  get reads(): { hits: number; misses: number } {
    return { hits: this.agents.hits, misses: this.agents.misses };
  }

  /**
   * The entry of `agentId`: the kept one, or one read now (`fresh` forces the read).
   * `nowMs` (the verify's clock) places the denials read.
   */
  async agent(db: Pool, agentId: string, nowMs: number, opts: { fresh?: boolean } = {}): Promise<AgentSnapshot> {
    if (opts.fresh) this.agents.invalidate(agentId);
    return this.agents.load(agentId, async () => {
      const r = await readAgentSnapshot(db, agentId, this.denialWindowSeconds);
      return { ...(r.agent ? { agent: r.agent } : {}), slots: r.candidates.map((row) => ({ row })), denials: r.denialAgesMs.map((age) => nowMs - age) };
    });
  }

  /**
   * The prepared candidates of `snap` (an entry of `agentId`) stamped with `nowMs`, and the
   * denials within the burst window. When the caller has seen a longer ledger than a
   * candidate holds (`seenSequence`: another process's spends), the entry is read afresh first.
   */
  async candidates(db: Pool, agentId: string, snap: AgentSnapshot, nowMs: number, seenSequence?: number): Promise<AgentCandidates> {
    let s = snap;
    if (seenSequence !== undefined && s.slots.some((x) => x.row.ledgerSequence < seenSequence)) s = await this.agent(db, agentId, nowMs, { fresh: true });
    return { candidates: await this.prepared(db, s.slots, nowMs), recentDenials: this.recentDenials(s, nowMs) };
  }

  /** Denials of `snap` within the burst window ending at `nowMs`. */
  recentDenials(snap: AgentSnapshot, nowMs: number): number {
    const from = nowMs - this.denialWindowSeconds * 1000;
    let n = 0;
    for (const t of snap.denials) if (t > from) n++;
    return n;
  }

  /** A denial of `agentId` at `atMs` was stored. */
  noteDenial(agentId: string, atMs: number): void {
    this.agents.update(agentId, (s) => {
      const from = atMs - this.denialWindowSeconds * 1000;
      return { ...s, denials: [...s.denials.filter((t) => t > from), atMs] };
    });
  }

  /** A spend of `agentId` was recorded (see the module comment). */
  noteSpend(agentId: string, n: SpendNote): void {
    this.agents.update(agentId, (s) => ({ ...s, slots: s.slots.map((slot) => withSpend(slot, n)) }));
  }

  /** Drops the entry of `agentId` (its next verify reads Postgres): after a write this process made that lowers a total. */
  forget(agentId: string): void {
    this.agents.invalidate(agentId);
  }

  /** Drops every agent's entry (the prepared records stay: they are keyed by version). */
  clear(): void {
    this.agents.clear();
  }

  /** The candidates of `slots`, prepared once per slot and stamped with `nowMs` on every use. */
  private async prepared(db: Pool, slots: readonly Slot[], nowMs: number): Promise<VerifyCandidate[]> {
    if (slots.length === 0) return [];
    if (slots.every((x) => x.prepared !== undefined)) return slots.map((x) => stamped(x.prepared as VerifyCandidate, nowMs));
    const out = await prepareCandidates(
      db,
      this.records,
      slots.map((x) => x.row),
      { now: nowMs },
    );
    slots.forEach((x, i) => (x.prepared = out[i]));
    return out;
  }
}

function stamped(c: VerifyCandidate, nowMs: number): VerifyCandidate {
  return { ...c, agreement: { ...c.agreement, ledgerAsOfMs: nowMs } };
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** `slot` with a spend applied: totals never go down, the head only forward; its candidate carried over (see the module comment). */
function withSpend(slot: Slot, n: SpendNote): Slot {
  const row = slot.row;
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
  if (out === row) return slot;
  const carried = carryOver(slot.prepared, out);
  return carried ? { row: out, prepared: carried } : { row: out };
}

/** The candidate of `from` for `to`, which a spend made from it (same revision and delegation generation: only totals moved). */
function carryOver(c: VerifyCandidate | undefined, to: ActiveAgreementRow): VerifyCandidate | undefined {
  if (!c) return undefined;
  const next: VerifyCandidate = { ...c, agreement: withLedgerTotals(c.agreement, totalsOf(to, c.agreement.ledgerAsOfMs)), row: to };
  if (to.delegation?.spentMinor !== undefined) next.delegationSpentMinor = to.delegation.spentMinor;
  else delete next.delegationSpentMinor;
  return next;
}
