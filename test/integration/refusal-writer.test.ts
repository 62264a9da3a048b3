/**
 * The batching writer of refusals (src/verify/commit/queues.ts, `refusalQueue`) against a real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "pg";
import { toResponse } from "../../src/api/errors.js";
import { createPool } from "../../src/store/pool.js";
import { saveVerifyDecision, type NewVerifyDecision } from "../../src/store/verify-decisions.js";
import { refusalQueue } from "../../src/verify/commit/queues.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const HASH = `sha256:${"a".repeat(64)}` as const;
const OTHER = `sha256:${"b".repeat(64)}` as const;

function refusal(agentId: string, actionId: string, requestHash: `sha256:${string}` = HASH): NewVerifyDecision {
  return { agentId, actionId, agreementId: null, requestHash, decision: { verdict: "DENY", reasons: ["AMOUNT_EXCEEDS_CEILING"], action_id: actionId } };
}

/** `pool` that counts the statements sent through it, and the rows of each batch insert. */
function counting(pool: Pool): { pool: Pool; statements: () => number; batchSizes: () => number[] } {
  let n = 0;
  const sizes: number[] = [];
  const proxy = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
      return (...args: unknown[]) => {
        n++;
        const q = args[0] as { name?: string; values?: unknown[] };
        if (q.name === "writ_verify_decisions_async") sizes.push((JSON.parse(String(q.values?.[0])) as unknown[]).length);
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { pool: proxy, statements: () => n, batchSizes: () => sizes };
}

describe("refusalQueue", () => {
  it("stores 200 concurrent refusals in far fewer statements, each once", async () => {
    const c = counting(db.pool);
    const writer = refusalQueue(c.pool);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => writer.add(refusal("agent-batch", `act-${i}`))));
    expect(results.every((r) => r.stored)).toBe(true);
    expect(c.statements()).toBeLessThan(20);
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM verify_decisions WHERE agent_id = 'agent-batch'");
    expect(rows[0]?.n).toBe(200);
  });

  it("answers the decision stored first: for a pre-existing one, and for two of one action sent together", async () => {
    const writer = refusalQueue(db.pool);
    await saveVerifyDecision(db.pool, refusal("agent-dup", "act-1", OTHER));
    const before = await writer.add(refusal("agent-dup", "act-1"));
    expect(before).toMatchObject({ stored: false, decision: { requestHash: OTHER, actionId: "act-1" } });

    const [a, b] = await Promise.all([writer.add(refusal("agent-dup", "act-2")), writer.add(refusal("agent-dup", "act-2", OTHER))]);
    expect(a).toEqual({ stored: true });
    expect(b).toMatchObject({ stored: false, decision: { requestHash: HASH } });
  });

  it("in a batch where some decisions were stored before, answers those with the stored ones and the rest as stored", async () => {
    await saveVerifyDecision(db.pool, refusal("agent-mixed", "act-1", OTHER));
    await saveVerifyDecision(db.pool, refusal("agent-mixed", "act-3", OTHER));
    const c = counting(db.pool);
    const writer = refusalQueue(c.pool);
    const results = await Promise.all(["act-0", "act-1", "act-2", "act-3", "act-4"].map((a) => writer.add(refusal("agent-mixed", a))));
    expect(c.batchSizes()).toEqual([5]);
    expect(results.map((r) => r.stored)).toEqual([true, false, true, false, true]);
    for (const i of [1, 3]) expect(results[i]).toMatchObject({ stored: false, decision: { requestHash: OTHER, actionId: `act-${i}` } });
    const { rows } = await db.pool.query<{ action_id: string; request_hash: string }>(
      "SELECT action_id, request_hash FROM verify_decisions WHERE agent_id = 'agent-mixed' ORDER BY action_id",
    );
    expect(rows.map((r) => [r.action_id, r.request_hash])).toEqual([
      ["act-0", HASH],
      ["act-1", OTHER],
      ["act-2", HASH],
      ["act-3", OTHER],
      ["act-4", HASH],
    ]);
  });

  it("rejects every refusal of a batch that cannot reach Postgres, in one attempt, and works again afterwards", async () => {
    const dead = createPool("postgres://nobody:x@127.0.0.1:1/none", { connectionTimeoutMillis: 500 });
    const c = counting(dead);
    const writer = refusalQueue(c.pool);
    const all = await Promise.allSettled([writer.add(refusal("agent-x", "a")), writer.add(refusal("agent-x", "b"))]);
    expect(all.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(c.statements()).toBe(1); // no retry by halves for an unreachable database
    await dead.end();
    const live = refusalQueue(db.pool);
    expect(await live.add(refusal("agent-x", "c"))).toEqual({ stored: true });
  });

  it("stores every other decision of a batch in which Postgres refuses one row (a lone surrogate in jsonb), and rejects only that one", async () => {
    const c = counting(db.pool);
    const writer = refusalQueue(c.pool);
    // JSON.stringify keeps a lone surrogate as the escape \ud800, which jsonb refuses.
    const bad: NewVerifyDecision = { ...refusal("agent-lone", "act-bad"), decision: { verdict: "DENY", reasons: ["AMOUNT_EXCEEDS_CEILING"], note: "\ud800" } };
    const good = Array.from({ length: 6 }, (_, i) => refusal(`agent-good-${i}`, `act-${i}`));
    const saves = [...good.slice(0, 3), bad, ...good.slice(3)].map((d) => writer.add(d));
    const results = await Promise.allSettled(saves);

    // All seven were sent in ONE insert first (the batch they shared), then apart.
    expect(c.batchSizes()[0]).toBe(7);
    expect(c.batchSizes().length).toBeGreaterThan(1);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    for (const r of results) if (r.status === "fulfilled") expect(r.value).toEqual({ stored: true });
    const refused = results[3] as PromiseRejectedResult;
    expect((refused.reason as { code?: string }).code).toMatch(/^22/); // a data exception (22P02)
    expect(toResponse(refused.reason)).toEqual({ status: 400, error: "a value of the request cannot be stored", logAsError: false });

    const { rows } = await db.pool.query<{ agent_id: string; action_id: string }>(
      "SELECT agent_id, action_id FROM verify_decisions WHERE agent_id LIKE 'agent-good-%' OR agent_id = 'agent-lone' ORDER BY agent_id",
    );
    expect(rows).toEqual(good.map((d) => ({ agent_id: d.agentId, action_id: d.actionId })));
  });
});
