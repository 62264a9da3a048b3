/**
 * Scenario (d) of `npm run bench:verify`: the ALLOW path's ledger writes alone, run directly
 * against the same Postgres: spends recorded through the group commit verify uses
 * (`spendQueue`, src/verify/commit/queues.ts, with its default bounds) with exactly
 * the spend a verify ALLOW records on a seeded agreement (intent slice re-checked under the
 * lock, the stored answer written in the same statement), from `connections` concurrent loops
 * through a pool of `poolSize` connections (writ serve's), over the same agreements
 * round-robin, unique action ids, for `seconds`. What verify could reach if everything but its
 * ledger write were free.
 */
import { toMinor } from "../../../src/core/money/index.js";
import { loadAgreementRecords } from "../../../src/store/agreements-read.js";
import { createPool } from "../../../src/store/pool.js";
import { readRequest, type VerifyRequest } from "../../../src/verify/pipeline/request.js";
import { recordSpend, spendQueue } from "../../../src/verify/commit/queues.js";
import type { DriverResult } from "./driver.js";
import { closedLoop } from "./loop.js";
import { CUMULATIVE, type SeededAgent } from "./seed.js";

/** Options of `spendLoop`. */
export interface SpendLoopOptions {
  connections: number;
  poolSize: number;
  seconds: number;
  idPrefix: string;
}

/** Runs the loop; the same figures the HTTP driver reports. */
export async function spendLoop(databaseUrl: string, agents: readonly SeededAgent[], o: SpendLoopOptions): Promise<DriverResult> {
  const pool = createPool(databaseUrl, { max: o.poolSize });
  const writer = spendQueue(pool);
  const sliceMinor = toMinor(CUMULATIVE, "USD");
  const proposedAt = new Date().toISOString();
  try {
    // As verify does, each spend names the revision it was decided on (allowedSpendFor).
    const revisions = new Map(
      (
        await loadAgreementRecords(
          pool,
          agents.map((a) => a.agreementId),
        )
      ).map((r) => [r.agreementId, r.revision]),
    );
    return await closedLoop(o.connections, o.seconds, async (i) => {
      const a = agents[i % agents.length] as SeededAgent;
      const actionId = `${o.idPrefix}-${i}`;
      const req: VerifyRequest = {
        agent_id: a.agentId,
        action: { action_id: actionId, action_type: "purchase", amount: 1, currency: "USD", proposed_at: proposedAt, merchant: "m-bench" },
      };
      const body = {
        verdict: "ALLOW",
        svc_decision: "ALLOW",
        reasons: [],
        messages: [],
        required_action: "NONE",
        agent_id: a.agentId,
        agreement_id: a.agreementId,
        action_id: actionId,
        intent_id: "i1",
      };
      const r = await recordSpend(writer, {
        agreementId: a.agreementId,
        intentId: "i1",
        actionId,
        amountMinor: 100n,
        currency: "USD",
        at: new Date().toISOString(),
        ...(revisions.has(a.agreementId) ? { revision: revisions.get(a.agreementId) } : {}),
        limits: { sliceMinor },
        decision: { agentId: a.agentId, requestHash: readRequest(req).hash, body },
      });
      return r.recorded ? "ALLOW" : r.reason;
    });
  } finally {
    await pool.end();
  }
}
