/**
 * 200 concurrent verify requests over HTTP against one agreement whose cumulative budget
 * allows exactly 10: exactly 10 ALLOW, the ledger chain verifies, and its total is the sum
 * allowed. No request fails with a server error.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spentByIntent, verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { createPool } from "../../src/store/pool.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let pool: Pool;
let server: TestServer;

beforeAll(async () => {
  w = await startVerifyWorld();
  pool = createPool(w.db.url, { max: 20 });
  server = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0" }, { pool });
});
afterAll(async () => {
  await server?.close();
  await pool?.end();
  await w?.close();
});

describe("concurrent verify", () => {
  it("allows exactly as many of 200 concurrent actions as the budget holds, on one verified chain", async () => {
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(w.agentId, "i1", { maximum_amount: 10, cumulative_maximum: 100 })] });
    const answers = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const r = await fetch(`${server.url}/v1/verify`, {
          method: "POST",
          headers: { authorization: `Bearer ${w.operatorKey}`, "content-type": "application/json" },
          body: JSON.stringify({ agent_id: w.agentId, action: action({ amount: 10 }) }),
        });
        return { status: r.status, body: (await r.json()) as Record<string, unknown> };
      }),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const allowed = answers.filter((a) => a.body.verdict === "ALLOW");
    expect(allowed).toHaveLength(10);
    expect(answers.filter((a) => a.body.verdict !== "ALLOW").every((a) => a.body.verdict === "DENY")).toBe(true);

    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    if (!a) throw new Error("agreement is not stored");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    const allowedEntries = (a.ledger ?? []).filter((e) => e.outcome === "allowed");
    expect(allowedEntries).toHaveLength(10);
    expect(allowedEntries.reduce((sum, e) => sum + (e.amount ?? 0), 0)).toBe(100);
    expect(spentByIntent(a).get("i1")).toBe(10_000n);
    const answered = allowed.map((x) => (x.body.ledger_entry as { entry_hash: string }).entry_hash).sort();
    expect(answered).toEqual(allowedEntries.map((e) => e.entry_hash).sort());
  });
});
