/**
 * The verify path's cache of prepared records: agreements by (key, revision), delegations by
 * (key, generation), the key a record's `recordKey` (its agent and id: an id names a record
 * only with its agent, docs/scale.md "Organization-scoped ids").
 *
 * Promises:
 * - Bounded: at most `maxEntries` prepared records in all, least recently used evicted first
 *   (approximately: ./recency-map.ts; one used within the last three quarters of `maxEntries`
 *   uses is never evicted).
 * - A key is prepared at most once at a time: concurrent misses share one preparation; a
 *   preparation that fails is not kept (the next call tries again).
 * - One entry per record: caching a newer revision (generation) drops the older one; an older
 *   one than the cached is prepared but not kept, so a slow reader cannot push out a newer record.
 * - Agreements are prepared with an empty ledger (./overlay.ts): callers overlay the totals they
 *   read at verify time with `withLedgerTotals`. The cached object is shared: never mutate it.
 */
import { prepareAgreement } from "../../core/agreement/index.js";
import { prepareDelegation, type Delegation, type PreparedDelegationWithProblems } from "../../core/delegation/index.js";
import type { PreparedAgreement } from "../../core/evaluate/index.js";
import type { AgreementRecord } from "../../store/index.js";
import { agreementForPreparation } from "./overlay.js";
import { RecencyMap } from "./recency-map.js";

/** The cache key of record `id` of agent `agentId` (ids never hold NUL). */
export function recordKey(agentId: string, id: string): string {
  return `${agentId}\u0000${id}`;
}

/** Default bound of the cache (entries). */
export const DEFAULT_CACHE_SIZE = 10_000;

/** Options of a RecordCache. */
export interface RecordCacheOptions {
  /** Most prepared records kept (agreements and delegations together). Default DEFAULT_CACHE_SIZE. */
  maxEntries?: number;
}

/** Counters of a RecordCache (for metrics). */
export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  size: number;
}

interface Slot<T> {
  id: string;
  version: number;
  value: Promise<T>;
}

/** A bounded LRU of prepared records keyed by (kind, id, version). */
export class RecordCache {
  private readonly slots: RecencyMap<Slot<unknown>>;
  /** Per record (kind + id): the key of its cached version. */
  private readonly current = new Map<string, string>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(opts: RecordCacheOptions = {}) {
    const max = opts.maxEntries ?? DEFAULT_CACHE_SIZE;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError("maxEntries must be a whole number at or above 1");
    this.slots = new RecencyMap(max);
  }

  /** The prepared agreement of (`id`, `revision`); `load` supplies the record on a miss. */
  agreement(id: string, revision: number, load: () => AgreementRecord | Promise<AgreementRecord>): Promise<PreparedAgreement> {
    return this.get("a", id, revision, async () => prepareAgreement(agreementForPreparation(await load())));
  }

  /** The prepared delegation of (`id`, `generation`); `load` supplies the record on a miss. */
  delegation(id: string, generation: number, load: () => Delegation | Promise<Delegation>): Promise<PreparedDelegationWithProblems> {
    return this.get("d", id, generation, async () => prepareDelegation(await load()));
  }

  /** True when (`id`, `revision`) of an agreement is cached (or being prepared). */
  hasAgreement(id: string, revision: number): boolean {
    return this.slots.has(key("a", id, revision));
  }

  /** True when (`id`, `generation`) of a delegation is cached (or being prepared). */
  hasDelegation(id: string, generation: number): boolean {
    return this.slots.has(key("d", id, generation));
  }

  /** Counters and current size. */
  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, size: this.slots.size };
  }

  /** Drops everything. */
  clear(): void {
    this.slots.clear();
    this.current.clear();
  }

  private get<T>(kind: "a" | "d", id: string, version: number, prepare: () => Promise<T>): Promise<T> {
    const k = key(kind, id, version);
    const hit = this.slots.get(k) as Slot<T> | undefined;
    if (hit) {
      this.hits++;
      return hit.value;
    }
    this.misses++;
    const record = `${kind}\u0000${id}`;
    const currentKey = this.current.get(record);
    const currentVersion = currentKey === undefined ? undefined : this.slots.peek(currentKey)?.version;
    const value = prepare();
    if (currentVersion !== undefined && currentVersion > version) return value; // older than cached: not kept
    if (currentKey !== undefined) this.slots.delete(currentKey);
    const slot: Slot<T> = { id, version, value };
    this.slots.set(k, slot);
    this.current.set(record, k);
    value.catch(() => {
      if (this.slots.peek(k) === slot) {
        this.slots.delete(k);
        if (this.current.get(record) === k) this.current.delete(record);
      }
    });
    this.evict();
    return value;
  }

  private evict(): void {
    this.slots.trim((k, slot) => {
      this.evictions++;
      const record = `${k.slice(0, 1)}\u0000${slot.id}`;
      if (this.current.get(record) === k) this.current.delete(record);
    });
  }
}

function key(kind: "a" | "d", id: string, version: number): string {
  return `${kind}\u0000${id}\u0000${version}`;
}
