/**
 * The group commit of ALLOWs (src/verify/commit/queues.ts, `spendQueue`) against a real Postgres:
 * concurrent spends share transactions and are chained in order; a spend that Postgres itself
 * refuses (its stored answer holds a lone surrogate, which jsonb rejects inside the batch's
 * write) fails alone while every other spend of its batch is recorded; an unreachable database
 * fails a batch at once, without retries.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, spentByIntent, verifyLedger, type IntentAgreement } from "../../src/core/agreement/index.js";
import { hashOf } from "../../src/core/canonical/index.js";
import { toResponse } from "../../src/api/errors.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { spendTotals, type AllowedSpend } from "../../src/store/ledger/index.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { findVerifyDecision } from "../../src/store/verify-decisions.js";
import { recordSpend, spendQueue } from "../../src/verify/commit/queues.js";
import { iso, principalKey, PRINCIPAL, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let pool: Pool;
const AGENT = "agent-gc";

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 10 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

async function storeAgreement(id: string): Promise<void> {
  const a = await buildSignedAgreement(
    {
      agreement_id: id,
      mandates: [{ intent_id: "i1", principal: { ...PRINCIPAL }, agent: { agent_id: AGENT }, currency: "USD", maximum_amount: 100, cumulative_maximum: 1000 }],
      at: iso(T0),
    },
    principalKey,
  );
  await withTransaction(pool, (c) => upsertAgreement(c, a, { orgId: "org_test" }));
}

async function ledgerOf(id: string): Promise<IntentAgreement> {
  const a = await loadAgreementWithLedger(pool, id);
  if (!a) throw new Error(`agreement ${id} is not stored`);
  return a;
}

function spend(
  agreementId: string,
  actionId: string,
  amountMinor: bigint,
  body: Record<string, unknown> = { verdict: "ALLOW", action_id: actionId },
): AllowedSpend {
  return {
    agreementId,
    intentId: "i1",
    actionId,
    amountMinor,
    currency: "USD",
    at: iso(T0 + 1000),
    limits: { sliceMinor: 100_000n },
    decision: { agentId: AGENT, requestHash: hashOf({ actionId }), body },
  };
}

describe("spendQueue", () => {
  it("records 300 concurrent spends over 3 agreements in few transactions, exactly the budget, each chain in one order", async () => {
    for (const id of ["gc-1", "gc-2", "gc-3"]) await storeAgreement(id);
    const sizes: number[] = [];
    const writer = spendQueue(pool, { observe: (_s, n) => sizes.push(n) });
    // 101 spends of 10.00 USD per agreement against a 1,000.00 USD slice: 100 fit, one is refused.
    const all = await Promise.all(Array.from({ length: 303 }, (_, i) => recordSpend(writer, spend(`gc-${(i % 3) + 1}`, `gc-a-${i}`, 1000n))));
    expect(all.filter((r) => r.recorded)).toHaveLength(300);
    const refused = all.filter((r) => !r.recorded);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r).toMatchObject({ recorded: false, reason: "CUMULATIVE_BUDGET_EXCEEDED" });
    // Far fewer transactions than spends (a batch holds at most 64).
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(303);
    expect(sizes.length).toBeLessThan(303 / 4);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    for (const id of ["gc-1", "gc-2", "gc-3"]) {
      const a = await ledgerOf(id);
      expect(verifyLedger(a), id).toEqual({ state: "ok" });
      expect(a.ledger ?? [], id).toHaveLength(100);
      expect(spentByIntent(a).get("i1"), id).toBe(100_000n);
      expect((await spendTotals(pool, id)).get("i1"), id).toBe(100_000n);
    }
    // Every answer names its own entry.
    const hashes = all.flatMap((r) => (r.recorded ? [r.entry.entry_hash] : []));
    expect(new Set(hashes).size).toBe(300);
  });

  it("fails only the spend whose stored answer Postgres refuses (a lone surrogate in jsonb); the rest of its batch is recorded", async () => {
    for (const id of ["gc-iso-1", "gc-iso-2"]) await storeAgreement(id);
    const sizes: number[] = [];
    const writer = spendQueue(pool, { observe: (_s, n) => sizes.push(n) });
    // JSON.stringify keeps a lone surrogate as the escape \ud800, which jsonb refuses: inside Postgres, in the batch's write.
    const bad = spend("gc-iso-1", "iso-bad", 100n, { verdict: "ALLOW", note: "\ud800" });
    const good = Array.from({ length: 6 }, (_, i) => spend(`gc-iso-${(i % 2) + 1}`, `iso-${i}`, 100n));
    const results = await Promise.allSettled([...good.slice(0, 3), bad, ...good.slice(3)].map((s) => recordSpend(writer, s)));

    expect(sizes[0]).toBe(7); // all seven shared one transaction first, which failed...
    expect(sizes.length).toBeGreaterThan(1); // ...and were written again apart
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    const refused = (results[3] as PromiseRejectedResult).reason as { code?: string };
    expect(refused.code).toMatch(/^22/); // a data exception (22P02)
    expect(toResponse(refused)).toEqual({ status: 400, error: "a value of the request cannot be stored", logAsError: false });
    for (const r of results) if (r.status === "fulfilled") expect(r.value).toMatchObject({ recorded: true, replayed: false, decisionStored: true });

    for (const id of ["gc-iso-1", "gc-iso-2"]) {
      const a = await ledgerOf(id);
      expect(verifyLedger(a), id).toEqual({ state: "ok" });
      expect((a.ledger ?? []).map((e) => e.action_id).sort(), id).toEqual(
        good
          .filter((s) => s.agreementId === id)
          .map((s) => s.actionId)
          .sort(),
      );
    }
    expect(await findVerifyDecision(pool, AGENT, "iso-bad")).toBeUndefined();
    expect(await findVerifyDecision(pool, AGENT, "iso-0")).toMatchObject({ agreementId: "gc-iso-1" });
  });

  it("rejects every spend of a batch that cannot reach Postgres, in one attempt", async () => {
    const dead = createPool("postgres://nobody:x@127.0.0.1:1/none", { connectionTimeoutMillis: 500 });
    const sizes: number[] = [];
    const writer = spendQueue(dead, { observe: (_s, n) => sizes.push(n) });
    const all = await Promise.allSettled([recordSpend(writer, spend("gc-1", "dead-1", 1n)), recordSpend(writer, spend("gc-2", "dead-2", 1n))]);
    expect(all.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(sizes).toEqual([2]); // no retry by halves for an unreachable database
    await dead.end();
  });

  it("rejects a malformed spend alone, before any transaction", async () => {
    await storeAgreement("gc-bad");
    const writer = spendQueue(pool);
    const [bad, ok] = await Promise.allSettled([recordSpend(writer, spend("gc-bad", "x", -1n)), recordSpend(writer, spend("gc-bad", "y", 1n))]);
    expect(bad).toMatchObject({ status: "rejected", reason: { code: "SPEND_INVALID" } });
    expect(ok).toMatchObject({ status: "fulfilled", value: { recorded: true } });
  });
});
