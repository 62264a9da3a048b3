/**
 * A binary min-heap of (key, due time) entries: the delayed part of the work queue. Entries are
 * never removed from the middle; the queue skips stale ones when they surface (lazy deletion).
 */

/** One delayed key. */
export interface DelayedEntry {
  key: string;
  /** Epoch ms when the key is due. */
  at: number;
}

/** Min-heap ordered by `at`. */
export class DelayHeap {
  private readonly items: DelayedEntry[] = [];

  get size(): number {
    return this.items.length;
  }

  push(entry: DelayedEntry): void {
    const a = this.items;
    a.push(entry);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((a[p] as DelayedEntry).at <= entry.at) break;
      a[i] = a[p] as DelayedEntry;
      i = p;
    }
    a[i] = entry;
  }

  peek(): DelayedEntry | undefined {
    return this.items[0];
  }

  pop(): DelayedEntry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      let mAt = last.at;
      if (l < a.length && (a[l] as DelayedEntry).at < mAt) {
        m = l;
        mAt = (a[l] as DelayedEntry).at;
      }
      if (r < a.length && (a[r] as DelayedEntry).at < mAt) m = r;
      if (m === i) break;
      a[i] = a[m] as DelayedEntry;
      i = m;
    }
    a[i] = last;
    return top;
  }
}
