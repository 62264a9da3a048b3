/**
 * Latency of the spend transaction: 2,000 sequential `recordAllowedSpend` calls on one
 * agreement (the ledger grows to 2,000 entries), without and with a delegation budget (one
 * more lock statement), after a warm-up of 300 calls on another agreement. Prints p50/p99; asserts only correctness (every spend recorded, the
 * chain verifies), since timings depend on the machine.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, spentByIntent, verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { recordAllowedSpend, type SpendLimits } from "../../src/store/ledger/index.js";
import { delegation, iso, principalKey, PRINCIPAL, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

const CALLS = 2000;
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 2 });
  await withTransaction(pool, (c) =>
    upsertDelegation(c, delegation(undefined, { delegation_id: "del-lat", agent: { agent_id: "agent-lat" }, delegation_chain: [] })),
  );
  for (const id of ["agr-warm", "agr-lat", "agr-lat-d"]) {
    const a = await buildSignedAgreement(
      {
        agreement_id: id,
        mandates: [
          {
            intent_id: "i1",
            principal: { ...PRINCIPAL },
            agent: { agent_id: "agent-lat" },
            currency: "USD",
            maximum_amount: 100,
            cumulative_maximum: 1_000_000,
          },
        ],
        at: iso(T0),
      },
      principalKey,
    );
    await withTransaction(pool, (c) => upsertAgreement(c, a, { delegationId: "del-lat" }));
  }
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function measure(agreementId: string, limits: SpendLimits, calls = CALLS): Promise<{ p50: number; p99: number; max: number }> {
  const wall: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const r = await recordAllowedSpend(pool, {
      agreementId,
      intentId: "i1",
      actionId: `lat-${i}`,
      amountMinor: 100n,
      currency: "USD",
      at: iso(T0 + i),
      limits,
    });
    wall.push(performance.now() - t);
    if (!r.recorded) throw new Error(`spend ${i} refused: ${r.reason}`);
  }
  wall.sort((a, b) => a - b);
  return { p50: quantile(wall, 0.5), p99: quantile(wall, 0.99), max: wall[wall.length - 1] ?? Number.NaN };
}

describe(`recordAllowedSpend latency over ${CALLS} sequential calls`, () => {
  it("records every spend on a verified chain and prints p50/p99", async () => {
    await measure("agr-warm", { sliceMinor: 100_000_000n }, 300); // JIT, prepared statements, caches
    const plain = await measure("agr-lat", { sliceMinor: 100_000_000n, parentCumulativeMinor: 100_000_000n });
    const withDelegation = await measure("agr-lat-d", {
      sliceMinor: 100_000_000n,
      delegation: { delegationId: "del-lat", cumulativeMinor: 100_000_000n, currency: "USD" },
    });
    const fmt = (s: { p50: number; p99: number; max: number }) => `p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms, max ${s.max.toFixed(3)} ms`;
    console.log(`recordAllowedSpend (slice + parent budget): ${fmt(plain)}`);
    console.log(`recordAllowedSpend (slice + delegation budget, +1 lock): ${fmt(withDelegation)}`);
    for (const id of ["agr-lat", "agr-lat-d"]) {
      const a = await loadAgreementWithLedger(pool, id);
      expect(a?.ledger).toHaveLength(CALLS);
      expect(a && verifyLedger(a)).toEqual({ state: "ok" });
      expect(a && spentByIntent(a).get("i1")).toBe(BigInt(CALLS) * 100n);
    }
  }, 120_000);
});
