/**
 * The batching writer of refusals (src/verify/refusal-writer.ts) against a real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "pg";
import { createPool } from "../../src/store/pool.js";
import { saveVerifyDecision, type NewVerifyDecision } from "../../src/store/verify-decisions.js";
import { RefusalWriter } from "../../src/verify/pipeline/refusal-writer.js";
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

/** `pool` that counts the statements sent through it. */
function counting(pool: Pool): { pool: Pool; statements: () => number } {
  let n = 0;
  const proxy = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === "query") return (...args: unknown[]) => (n++, (target.query as (...a: unknown[]) => unknown)(...args));
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { pool: proxy, statements: () => n };
}

describe("RefusalWriter", () => {
  it("stores 200 concurrent refusals in far fewer statements, each once", async () => {
    const c = counting(db.pool);
    const writer = new RefusalWriter(c.pool);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => writer.save(refusal("agent-batch", `act-${i}`))));
    expect(results.every((r) => r.stored)).toBe(true);
    expect(c.statements()).toBeLessThan(20);
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM verify_decisions WHERE agent_id = 'agent-batch'");
    expect(rows[0]?.n).toBe(200);
  });

  it("answers the decision stored first: for a pre-existing one, and for two of one action sent together", async () => {
    const writer = new RefusalWriter(db.pool);
    await saveVerifyDecision(db.pool, refusal("agent-dup", "act-1", OTHER));
    const before = await writer.save(refusal("agent-dup", "act-1"));
    expect(before).toMatchObject({ stored: false, decision: { requestHash: OTHER, actionId: "act-1" } });

    const [a, b] = await Promise.all([writer.save(refusal("agent-dup", "act-2")), writer.save(refusal("agent-dup", "act-2", OTHER))]);
    expect(a).toEqual({ stored: true });
    expect(b).toMatchObject({ stored: false, decision: { requestHash: HASH } });
  });

  it("rejects every refusal of a batch that failed, and works again afterwards", async () => {
    const dead = createPool("postgres://nobody:x@127.0.0.1:1/none", { connectionTimeoutMillis: 500 });
    const writer = new RefusalWriter(dead);
    const all = await Promise.allSettled([writer.save(refusal("agent-x", "a")), writer.save(refusal("agent-x", "b"))]);
    expect(all.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await dead.end();
    const live = new RefusalWriter(db.pool);
    expect(await live.save(refusal("agent-x", "c"))).toEqual({ stored: true });
  });
});
