import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { FollowedCache } from "../../../src/verify/caches/followed-cache.js";

class Feed extends EventEmitter {
  listening = true;
  drop(): void {
    this.listening = false;
    this.emit("disconnected");
  }
  connect(): void {
    this.listening = true;
    this.emit("connected");
  }
}

function setup(opts: { ttlMs?: number; maxEntries?: number } = {}) {
  let now = 1_000;
  const feed = new Feed();
  const cache = new FollowedCache<string>({ ttlMs: opts.ttlMs ?? 1000, clock: () => now, ...(opts.maxEntries ? { maxEntries: opts.maxEntries } : {}) }).follow(
    feed,
  );
  let reads = 0;
  const read =
    (v = "v") =>
    async () => {
      reads++;
      return v;
    };
  return { feed, cache, read, reads: () => reads, tick: (ms: number) => (now += ms) };
}

describe("FollowedCache", () => {
  it("keeps what it read and serves it until the entry's lifetime ends", async () => {
    const t = setup();
    expect(await t.cache.load("a", t.read("1"))).toBe("1");
    expect(await t.cache.load("a", t.read("2"))).toBe("1");
    expect(t.reads()).toBe(1);
    t.tick(999);
    expect(t.cache.get("a")).toBe("1");
    t.tick(1);
    expect(t.cache.get("a")).toBeUndefined();
    expect(await t.cache.load("a", t.read("3"))).toBe("3");
  });

  it("keeps nothing before it follows a feed, nor with a lifetime of 0", async () => {
    const unfollowed = new FollowedCache<string>({ ttlMs: 1000 });
    await unfollowed.load("a", async () => "x");
    expect(unfollowed.size).toBe(0);
    const t = setup({ ttlMs: 0 });
    await t.cache.load("a", t.read());
    await t.cache.load("a", t.read());
    expect(t.reads()).toBe(2);
  });

  it("serves and keeps nothing while the feed is not listening, and drops everything on loss and on reconnection", async () => {
    const t = setup();
    await t.cache.load("a", t.read("1"));
    t.feed.drop();
    expect(t.cache.get("a")).toBeUndefined();
    expect(await t.cache.load("a", t.read("2"))).toBe("2");
    expect(t.cache.size).toBe(0);
    t.feed.connect();
    await t.cache.load("a", t.read("3"));
    expect(t.cache.get("a")).toBe("3");
    t.feed.connect();
    expect(t.cache.size).toBe(0);
  });

  it("does not keep a read that an invalidation of its key (or of everything) raced", async () => {
    const t = setup();
    let release: (v: string) => void = () => {};
    const slow = t.cache.load("a", () => new Promise<string>((r) => (release = r)));
    t.cache.invalidate("a");
    release("old");
    expect(await slow).toBe("old");
    expect(t.cache.get("a")).toBeUndefined();

    const slow2 = t.cache.load("b", () => new Promise<string>((r) => (release = r)));
    t.cache.invalidate("other");
    release("fine");
    await slow2;
    expect(t.cache.get("b")).toBe("fine");

    const slow3 = t.cache.load("c", () => new Promise<string>((r) => (release = r)));
    t.cache.clear();
    release("old");
    await slow3;
    expect(t.cache.get("c")).toBeUndefined();
  });

  it("keeps no failed read, and at most maxEntries entries (least recently used dropped)", async () => {
    const t = setup({ maxEntries: 2 });
    await expect(t.cache.load("x", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(t.cache.size).toBe(0);
    await t.cache.load("a", t.read("a"));
    await t.cache.load("b", t.read("b"));
    t.cache.get("a");
    await t.cache.load("c", t.read("c"));
    expect(t.cache.get("b")).toBeUndefined();
    expect(t.cache.get("a")).toBe("a");
    expect(t.cache.get("c")).toBe("c");
  });

  it("update replaces a kept value only", async () => {
    const t = setup();
    t.cache.update("a", () => "never");
    expect(t.cache.size).toBe(0);
    await t.cache.load("a", t.read("1"));
    t.cache.update("a", (v) => `${v}+`);
    expect(t.cache.get("a")).toBe("1+");
  });
});
