/**
 * The recency order of a bounded cache: a Map kept in least-recently-used order, cheap to
 * read. Moving a key to the young end on EVERY read (a delete and a set) made the caches of a
 * process with tens of thousands of agents a visible cost of every verify (docs/verify.md), so
 * a read moves its key only when the key's last move is more than a quarter of `max` uses
 * old (a use: a read that finds its key, or a store).
 *
 * Promise: `trim` drops the keys moved longest ago first, and never drops a key used within
 * the last `max - floor(max / 4)` uses (below 4 entries: exact LRU). For such a key to be the
 * oldest, every other kept key must have been stored or moved after its last move, which takes
 * at least `max` uses, while it was moved at most `floor(max / 4)` uses before its last use.
 */
export class RecencyMap<V> {
  private readonly entries = new Map<string, { value: V; moved: number }>();
  private uses = 0;
  private readonly slack: number;

  constructor(readonly max: number) {
    this.slack = Math.floor(max / 4);
  }

  get size(): number {
    return this.entries.size;
  }

  /** True when `key` is kept (not a use: its place is unchanged). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value of `key` without using it (its place is unchanged). */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** The value of `key`, used now (see the module comment). */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.uses++;
    if (this.uses - e.moved > this.slack) {
      this.entries.delete(key);
      e.moved = this.uses;
      this.entries.set(key, e);
    }
    return e.value;
  }

  /** Stores `value` as the youngest (a use). Call `trim` after. */
  set(key: string, value: V): void {
    this.uses++;
    this.entries.delete(key);
    this.entries.set(key, { value, moved: this.uses });
  }

  delete(key: string): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Drops the oldest keys while more than `max` are kept, telling `dropped` of each. */
  trim(dropped?: (key: string, value: V) => void): void {
    while (this.entries.size > this.max) {
      const oldest = this.entries.entries().next();
      if (oldest.done) return;
      const [key, e] = oldest.value;
      this.entries.delete(key);
      dropped?.(key, e.value);
    }
  }
}
