/**
 * Scenario (d) of `npm run bench:verify`: the ALLOW path's ledger transaction alone, run
 * directly against the same Postgres: `recordAllowedSpend` with exactly the spend a verify
 * ALLOW records on a seeded agreement (intent slice re-checked under the lock, the stored
 * answer written in the same statement), from `connections` concurrent loops through a pool of
 * `poolSize` connections (writ serve's), over the same agreements round-robin, unique action
 * ids, for `seconds`. What verify could reach if everything but its ledger write were free.
 */
import { toMinor } from "../../../src/core/money/index.js";
import { createPool } from "../../../src/store/pool.js";
import { readRequest, type VerifyRequest } from "../../../src/verify/pipeline/request.js";
import { recordAllowedSpend } from "../../../src/store/ledger/index.js";
import { summarize } from "../stats.js";
import type { DriverResult } from "./driver.js";
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
  const sliceMinor = toMinor(CUMULATIVE, "USD");
  const proposedAt = new Date().toISOString();
  const latencies: number[] = [];
  const verdicts: Record<string, number> = {};
  let errors = 0;
  let issued = 0;
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const deadline = start + o.seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: o.connections }, async () => {
        while (performance.now() < deadline) {
          const i = issued++;
          const a = agents[i % agents.length] as SeededAgent;
          const actionId = `${o.idPrefix}-${i}`;
          const req: VerifyRequest = { agent_id: a.agentId, action: { action_id: actionId, action_type: "purchase", amount: 1, currency: "USD", proposed_at: proposedAt, merchant: "m-bench" } };
          const body = { verdict: "ALLOW", svc_decision: "ALLOW", reasons: [], messages: [], required_action: "NONE", agent_id: a.agentId, agreement_id: a.agreementId, action_id: actionId, intent_id: "i1" };
          const t = performance.now();
          try {
            const r = await recordAllowedSpend(pool, {
              agreementId: a.agreementId,
              intentId: "i1",
              actionId,
              amountMinor: 100n,
              currency: "USD",
              at: new Date().toISOString(),
              limits: { sliceMinor },
              decision: { agentId: a.agentId, requestHash: readRequest(req).hash, body },
            });
            latencies.push(performance.now() - t);
            const v = r.recorded ? "ALLOW" : r.reason;
            verdicts[v] = (verdicts[v] ?? 0) + 1;
          } catch {
            errors++;
          }
        }
      }),
    );
  } finally {
    await pool.end();
  }
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return {
    ...summarize(latencies, seconds),
    statuses: {},
    verdicts,
    errors,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}
