/**
 * A bounded in-memory cache that follows the change notices of Postgres (`writ_changes`, read
 * by the process's LISTEN connection, ./revocation-channel.ts): entries are dropped when a
 * notice names them, and ALL are dropped when the connection is lost or re-made (on Citus, also
 * when a worker's LISTEN connection is: `changes-reset`).
 *
 * Promises:
 * - Nothing is served from the cache unless its feed is listening now: while the connection
 *   is down (a notice could be missed) every `get` misses and `load` reads through without
 *   keeping the value.
 * - A value read by `load` is kept only if no invalidation of its key (or of everything)
 *   happened while it was being read, so a read that raced a change is never kept.
 * - Entries expire `ttlMs` after they were read (0 turns the cache off); at most
 *   `maxEntries` are kept, least recently used dropped first (approximately: ./recency-map.ts;
 *   an entry used within the last three quarters of `maxEntries` uses is never dropped).
 */
import { RecencyMap } from "./recency-map.js";

/** The notices a FollowedCache follows (a RevocationChannel). */
export interface ChangeFeed {
  /** True while no notice can be missed. */
  readonly listening: boolean;
  on(event: "connected" | "disconnected" | "changes-reset", fn: () => void): unknown;
}

/** Options of a FollowedCache. */
export interface FollowedCacheOptions {
  /** How long an entry is served after its read, ms (0: never cached). */
  ttlMs: number;
  /** Most entries kept (default 10,000). */
  maxEntries?: number;
  /** Clock, epoch ms (default Date.now). */
  clock?: () => number;
}

interface Entry<V> {
  value: V;
  readAt: number;
}

interface Pending {
  stale: boolean;
}

/** The cache (see the module comment). */
export class FollowedCache<V> {
  private readonly entries: RecencyMap<Entry<V>>;
  private readonly pending = new Map<string, Set<Pending>>();
  private readonly clock: () => number;
  private feed: ChangeFeed | null = null;
  /** Loads answered from memory. */
  hits = 0;
  /** Loads that read (the key was not kept, had expired, or nothing may be kept now). */
  misses = 0;

  constructor(private readonly opts: FollowedCacheOptions) {
    this.entries = new RecencyMap(opts.maxEntries ?? 10_000);
    this.clock = opts.clock ?? Date.now;
  }

  /** Follows `feed`: nothing is cached before this, and everything is dropped on (re)connection or loss. */
  follow(feed: ChangeFeed): this {
    this.feed = feed;
    feed.on("connected", () => this.clear());
    feed.on("disconnected", () => this.clear());
    feed.on("changes-reset", () => this.clear());
    return this;
  }

  /** True when values may be served and kept now. */
  get usable(): boolean {
    return this.opts.ttlMs > 0 && this.feed?.listening === true;
  }

  /** Number of entries kept. */
  get size(): number {
    return this.entries.size;
  }

  /** The fresh value of `key`, or undefined. */
  get(key: string): V | undefined {
    if (!this.usable) return undefined;
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (this.clock() - e.readAt >= this.opts.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /** The fresh value of `key`, or `read()`'s, which is kept unless an invalidation raced it. */
  async load(key: string, read: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) {
      this.hits++;
      return hit;
    }
    this.misses++;
    if (!this.usable) return read();
    const token: Pending = { stale: false };
    const readAt = this.clock();
    let set = this.pending.get(key);
    if (!set) this.pending.set(key, (set = new Set()));
    set.add(token);
    try {
      const value = await read();
      if (!token.stale && this.usable) this.keep(key, { value, readAt });
      return value;
    } finally {
      set.delete(token);
      if (set.size === 0 && this.pending.get(key) === set) this.pending.delete(key);
    }
  }

  /** Replaces the kept value of `key` with `fn(value)` (nothing when none is kept). */
  update(key: string, fn: (value: V) => V): void {
    const e = this.entries.peek(key);
    if (e) e.value = fn(e.value);
  }

  /** Drops `key` (and makes a read of it in progress not kept). */
  invalidate(key: string): void {
    this.entries.delete(key);
    for (const p of this.pending.get(key) ?? []) p.stale = true;
  }

  /** Drops everything (and makes every read in progress not kept). */
  clear(): void {
    this.entries.clear();
    for (const set of this.pending.values()) for (const p of set) p.stale = true;
  }

  private keep(key: string, e: Entry<V>): void {
    this.entries.set(key, e);
    this.entries.trim();
  }
}
