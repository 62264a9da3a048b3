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
});
