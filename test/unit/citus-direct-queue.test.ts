/**
 * Which pool the spends' group commit writes a batch through on a Citus cluster
 * (src/verify/commit/queues.ts, WRIT_CITUS_DIRECT): the agent's worker's pool once its worker
 * is known, the coordinator's for an agent not known yet, a sub-agent's spend (its ancestors may
 * be another worker's) and on plain Postgres. The pools here refuse every connection with their
 * own name, so a spend's rejection names the pool it was sent to. On a real cluster:
 * test/integration/citus.test.ts.
 */
import type { Pool } from "pg";
import { describe, expect, it } from "vitest";
import type { AllowedSpend } from "../../src/store/ledger/index.js";
import { recordSpend, spendQueue } from "../../src/verify/commit/queues.js";

/** A pool whose every connection fails with `name`. */
function refusing(name: string): Pool {
  return {
    connect: async () => {
      throw new Error(name);
    },
    query: async () => {
      throw new Error(name);
    },
  } as unknown as Pool;
}

const spend = (agent: string, extra: Partial<AllowedSpend> = {}): AllowedSpend => ({
  agreementId: `agr-${agent}`,
  agentId: agent,
  intentId: "i1",
  actionId: `act-${agent}-${Math.random()}`,
  amountMinor: 100n,
  currency: "USD",
  at: "2026-01-01T00:00:00.000Z",
  ...extra,
});

/** The queue on a Citus cluster whose agents `a…` are on worker group 1 and others not known yet; the pools it asked for. */
function citusQueue(opts: { citus?: boolean } = {}) {
  const asked: string[] = [];
  let failed = 0;
  const queue = spendQueue(refusing("coordinator"), {
    perAgent: () => opts.citus ?? true,
    nodeOf: (agent) => (agent.startsWith("a") ? "node:1" : `agent:${agent}`),
    direct: {
      poolFor: (group) => {
        asked.push(group);
        return group === "node:1" ? refusing("worker 1") : undefined;
      },
      failed: () => void failed++,
      end: async () => {},
    },
  });
  return { queue, asked, failed: () => failed };
}

describe("the spends' group commit on a Citus cluster (WRIT_CITUS_DIRECT)", () => {
  it("sends a known worker's batch to that worker's pool, and reads the workers again when it failed", async () => {
    const q = citusQueue();
    await expect(recordSpend(q.queue, spend("a1"))).rejects.toThrow("worker 1");
    expect(q.asked).toContain("node:1");
    expect(q.failed()).toBeGreaterThan(0);
  });

  it("sends an agent whose worker is not known yet through the coordinator", async () => {
    const q = citusQueue();
    await expect(recordSpend(q.queue, spend("b1"))).rejects.toThrow("coordinator");
    expect(q.failed()).toBe(0);
  });

  it("sends a sub-agent's spend (a stored chain) through the coordinator, even on a known worker", async () => {
    const q = citusQueue();
    const chained = spend("a2", { limits: { chain: { delegationId: "del-child", ancestorIds: ["del-root"], currency: "USD", amountMinor: 100n } } });
    await expect(recordSpend(q.queue, chained)).rejects.toThrow("coordinator");
    expect(q.asked).toEqual([]);
  });

  it("uses the one pool on plain Postgres (no worker is asked for)", async () => {
    const q = citusQueue({ citus: false });
    await expect(recordSpend(q.queue, spend("a3"))).rejects.toThrow("coordinator");
    expect(q.asked).toEqual([]);
  });

  it("keeps one batch in flight per worker, whatever inFlight says, and a worker's batches never wait for another's; plain Postgres keeps inFlight", async () => {
    // Pools whose connections never come: each connect is a transaction started on that pool.
    const started: string[] = [];
    const hanging = (name: string) => ({ connect: () => (started.push(name), new Promise(() => {})), query: () => new Promise(() => {}) }) as unknown as Pool;
    const workers = new Map([
      ["node:1", hanging("worker 1")],
      ["node:2", hanging("worker 2")],
    ]);
    const make = (citus: boolean) =>
      spendQueue(hanging("coordinator"), {
        inFlight: 2,
        perAgent: () => citus,
        nodeOf: (agent) => (agent.startsWith("a") ? "node:1" : "node:2"),
        direct: { poolFor: (g) => workers.get(g), failed: () => {}, end: async () => {} },
      });
    /** Waits until `f()` holds (bounded: the 1 ms gather windows pass meanwhile). */
    const until = async (f: () => boolean) => {
      for (let i = 0; i < 500 && !f(); i++) await new Promise((r) => setTimeout(r, 1));
      expect(f()).toBe(true);
    };
    const citus = make(true);
    void citus.add(spend("a1"));
    await until(() => started.length === 1);
    void citus.add(spend("a2"));
    void citus.add(spend("b1"));
    // Worker 2's batch goes at once; worker 1's second waits for its first.
    await until(() => started.length === 2 && citus.waiting === 1);
    expect(started).toEqual(["worker 1", "worker 2"]);
    started.length = 0;
    const plain = make(false);
    void plain.add(spend("a3"));
    await until(() => started.length === 1);
    void plain.add(spend("a4"));
    await until(() => started.length === 2);
    expect(started).toEqual(["coordinator", "coordinator"]);
  });
});
