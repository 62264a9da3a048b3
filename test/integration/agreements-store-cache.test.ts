/**
 * The record cache and the verify candidates on real Postgres: the same prepared object for
 * the same revision (also across spends), a new one after an upsert, and totals that are
 * always those of the database at verify time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluate } from "../../src/core/evaluate/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { withTransaction } from "../../src/store/pool.js";
import { recordKey } from "../../src/verify/caches/record-cache.js";
import { loadCandidates, RecordCache } from "../../src/verify/index.js";
import { recordAllowedSpend } from "../../src/store/ledger/index.js";
import { action, agreement, AGENT, context, delegation, iso, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  const a = await agreement();
  await withTransaction(db.pool, (c) => upsertDelegation(c, delegation(a), { orgId: "org_c" }));
});
afterAll(async () => {
  await db?.drop();
});

describe("RecordCache with loadCandidates", () => {
  it("returns the same prepared record for the same revision and generation, with fresh totals", async () => {
    const cache = new RecordCache({ maxEntries: 10 });
    const [first] = await loadCandidates(db.pool, cache, AGENT, { now: T0 });
    expect(first).toBeDefined();
    expect(first?.agreement.totalSpentMinor).toBe(0n);
    expect(cache.stats()).toMatchObject({ misses: 2, hits: 0, size: 2 });

    const spent = await recordAllowedSpend(db.pool, {
      agreementId: "agr-1",
      intentId: "groceries",
      actionId: "c-1",
      amountMinor: 4250n,
      currency: "USD",
      at: iso(T0),
    });
    expect(spent.recorded).toBe(true);
    const [second] = await loadCandidates(db.pool, cache, AGENT, { now: T0 + 1 });
    expect(cache.stats()).toMatchObject({ misses: 2, hits: 2, size: 2 });
    expect(second?.revision).toBe(first?.revision);
    expect(second?.delegation).toBe(first?.delegation);
    // The overlay is new; what it was made from is the cached object.
    const base = await cache.agreement(recordKey(AGENT, "agr-1"), first?.revision ?? 0, () => {
      throw new Error("must be cached");
    });
    expect(second?.agreement.mandates[0]?.signature).toBe(base.mandates[0]?.signature);
    expect(second?.agreement.mandates.map((m) => m.spentMinor)).toEqual([4250n, 0n, 0n]);
    expect(second?.agreement).toMatchObject({ totalSpentMinor: 4250n, ledgerSequence: 1, ledgerAsOfMs: T0 + 1, ledger: { state: "ok" } });
    expect(second?.delegationSpentMinor).toBe(4250n);
    expect(base.totalSpentMinor).toBe(0n);

    // The candidate evaluates like any prepared record.
    const d = second?.delegation;
    const p = second?.agreement;
    if (!d || !p) throw new Error("candidate incomplete");
    const decision = evaluate(d, p, action(), context({ delegationSpentMinor: second.delegationSpentMinor }));
    expect(decision.verdict).toBe("ALLOW");
  });

  it("prepares a new record after an upsert changes the revision", async () => {
    const cache = new RecordCache();
    const [before] = await loadCandidates(db.pool, cache, AGENT, { now: T0 });
    const a = await agreement();
    const edited = { ...a, updated_at: iso(T0 + 5) };
    const r = await withTransaction(db.pool, (c) => upsertAgreement(c, edited));
    expect(r.revision).toBe((before?.revision ?? 0) + 1);
    const [after] = await loadCandidates(db.pool, cache, AGENT, { now: T0 });
    expect(after?.revision).toBe(r.revision);
    expect(after?.agreement.agreement.updated_at).toBe(iso(T0 + 5));
    expect(after?.delegation).toBe(before?.delegation);
    expect(cache.hasAgreement(recordKey(AGENT, "agr-1"), before?.revision ?? 0)).toBe(false);
    expect(cache.hasAgreement(recordKey(AGENT, "agr-1"), r.revision)).toBe(true);
    expect(cache.stats().size).toBe(2);
  });
});
