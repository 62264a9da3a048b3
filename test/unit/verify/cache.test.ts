import { describe, expect, it } from "vitest";
import { splitAgreement } from "../../../src/store/agreements.js";
import { RecordCache } from "../../../src/verify/caches/record-cache.js";
import { agreement, delegation } from "../../fixtures/records.js";

const record = async () => splitAgreement(await agreement()).record;

describe("RecordCache", () => {
  it("prepares a key once and returns the same object until another version replaces it", async () => {
    const cache = new RecordCache();
    const rec = await record();
    let loads = 0;
    const load = () => {
      loads++;
      return rec;
    };
    const [a, b] = await Promise.all([cache.agreement("agr-1", 1, load), cache.agreement("agr-1", 1, load)]);
    expect(a).toBe(b);
    expect(await cache.agreement("agr-1", 1, load)).toBe(a);
    expect(loads).toBe(1);
    expect(a.ledgerSequence).toBe(0);
    const next = await cache.agreement("agr-1", 2, load);
    expect(next).not.toBe(a);
    expect(cache.hasAgreement("agr-1", 1)).toBe(false);
    // An older version than the cached one is prepared but not kept.
    const old = await cache.agreement("agr-1", 1, load);
    expect(old).not.toBe(a);
    expect(cache.hasAgreement("agr-1", 1)).toBe(false);
    expect(cache.hasAgreement("agr-1", 2)).toBe(true);
    expect(cache.stats()).toEqual({ hits: 2, misses: 3, evictions: 0, size: 1 });
  });

  it("keeps agreements and delegations apart, and evicts the least recently used beyond its bound", async () => {
    const cache = new RecordCache({ maxEntries: 2 });
    const rec = await record();
    const d = delegation();
    await cache.agreement("x", 1, () => rec);
    await cache.delegation("x", 1, () => d);
    await cache.agreement("x", 1, () => rec); // touch: the delegation is now the oldest
    await cache.agreement("y", 1, () => rec);
    expect(cache.hasAgreement("x", 1)).toBe(true);
    expect(cache.hasDelegation("x", 1)).toBe(false);
    expect(cache.hasAgreement("y", 1)).toBe(true);
    expect(cache.stats()).toMatchObject({ evictions: 1, size: 2 });
    const pd = await cache.delegation("x", 1, () => d);
    expect(pd.delegation).toBe(d);
    expect(pd.problems).toEqual([]);
  });

  it("does not keep a failed preparation", async () => {
    const cache = new RecordCache();
    await expect(
      cache.agreement("agr-1", 1, () => {
        throw new Error("database down");
      }),
    ).rejects.toThrow("database down");
    expect(cache.hasAgreement("agr-1", 1)).toBe(false);
    const ok = await cache.agreement("agr-1", 1, record);
    expect(ok.agreement.agreement_id).toBe("agr-1");
  });

  it("refuses a bound below 1", () => {
    expect(() => new RecordCache({ maxEntries: 0 })).toThrow(RangeError);
  });
});
