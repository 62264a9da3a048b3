/**
 * The data `npm run bench:verify` runs against: one operator organization and its key
 * (through the server's own API, as an operator would), and `count` active agents, each with
 * one signed agreement bound to its own delegation (through the store's repository functions,
 * in parallel). Every agreement's intent `i1` allows up to 100 USD per payment and 1,000,000
 * USD in all, valid from an hour ago for a day: ample budgets, no human approval needed.
 */
import { sha256 } from "../../../src/core/canonical/index.js";
import { signerFromSeed } from "../../../src/core/jose/index.js";
import { createPool } from "../../../src/store/pool.js";
import { storeGrant } from "../grant.js";

/** Per-payment ceiling of every seeded intent (USD). */
export const CEILING = 100;
/** Cumulative maximum of every seeded intent (USD). */
export const CUMULATIVE = 1_000_000;
const PRINCIPAL_ID = "biz_bench";
const principalKey = signerFromSeed(sha256("writ bench principal").toString("hex"));

/** One seeded agent and its agreement. */
export interface SeededAgent {
  agentId: string;
  agreementId: string;
}

/** What was seeded. */
export interface Seeded {
  orgId: string;
  operatorKey: string;
  agents: SeededAgent[];
}

async function api(base: string, admin: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const out = (await r.json()) as Record<string, unknown>;
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(out)}`);
  return out;
}

/** Options of `seed`. */
export interface SeedOptions {
  /** Agents seeded at a time (default 8). */
  parallel?: number;
  /** Names ids `agent-<prefix>-<i>`, `agr-<prefix>-<i>` (default "bench"). */
  prefix?: string;
  /** Cumulative maximum of each agent's intent, USD (default CUMULATIVE). */
  cumulative?: (i: number) => number;
  /**
   * Limits per period on every agreement: `all` (BENCH_PERIODS=1): the intent has a calendar day
   * and month (Europe/Berlin, amount and count) and a rolling 24 hours; the delegation a calendar
   * week. `intent`: the intent's three alone; `rolling`: the intent's rolling 24 hours alone
   * (what each part costs). Ample, so no ALLOW is refused by them: what they cost is measured,
   * not what they refuse.
   */
  periods?: BenchPeriods;
}

/** Which period limits the seeded agreements have (see SeedOptions.periods). */
export type BenchPeriods = "all" | "intent" | "rolling";

/** BENCH_PERIODS of `env`: `1` (all), `intent`, `rolling`; unset, empty or `0`: none; anything else throws. */
export function benchPeriodsFromEnv(env: NodeJS.ProcessEnv): BenchPeriods | undefined {
  const v = env.BENCH_PERIODS?.trim() ?? "";
  if (v === "" || v === "0") return undefined;
  if (v === "1") return "all";
  if (v === "intent" || v === "rolling") return v;
  throw new Error(`BENCH_PERIODS must be 1, intent, rolling or 0, not ${JSON.stringify(v.slice(0, 40))}`);
}

/** The period limits of BENCH_PERIODS=1 (see SeedOptions.periods). */
export const BENCH_INTENT_PERIODS = {
  time_zone: "Europe/Berlin",
  period_limits: [
    { period: "day" as const, amount: CUMULATIVE, count: 1_000_000 },
    { period: "month" as const, amount: CUMULATIVE },
    { rolling: "PT24H", amount: CUMULATIVE },
  ],
};
/** BENCH_PERIODS=rolling: the intent's rolling 24 hours alone. */
export const BENCH_ROLLING_PERIODS = { ...BENCH_INTENT_PERIODS, period_limits: BENCH_INTENT_PERIODS.period_limits.filter((l) => "rolling" in l) };
export const BENCH_DELEGATION_PERIODS = { time_zone: "America/New_York", period_limits: [{ period: "week" as const, amount: CUMULATIVE, count: 1_000_000 }] };

/** The limits each BENCH_PERIODS seeds (see SeedOptions.periods). */
const BENCH_PERIOD_LIMITS = {
  all: { mandate: BENCH_INTENT_PERIODS, scope: BENCH_DELEGATION_PERIODS },
  intent: { mandate: BENCH_INTENT_PERIODS },
  rolling: { mandate: BENCH_ROLLING_PERIODS },
} satisfies Record<BenchPeriods, object>;

/** Seeds `count` agents with agreements (ids `bench-<i>`), `parallel` at a time. */
export async function seed(serveUrl: string, databaseUrl: string, admin: string, count: number, opts: SeedOptions = {}): Promise<Seeded> {
  const parallel = opts.parallel ?? 8;
  const prefix = opts.prefix ?? "bench";
  const org = await api(serveUrl, admin, "/v1/orgs", { name: `${prefix} operator`, org_type: "agent_operator" });
  const orgId = String(org.org_id);
  const key = await api(serveUrl, admin, `/v1/orgs/${orgId}/keys`, { name: "bench verify" });
  const pool = createPool(databaseUrl, { max: parallel });
  const now = Date.now();
  const agents: SeededAgent[] = Array.from({ length: count }, (_, i) => ({ agentId: `agent-${prefix}-${i}`, agreementId: `agr-${prefix}-${i}` }));
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < agents.length) {
          const i = next++;
          const a = agents[i] as SeededAgent;
          await storeGrant(pool, {
            orgId,
            agentId: a.agentId,
            agreementId: a.agreementId,
            delegationId: `del-bench-${a.agentId}`,
            principal: { id: PRINCIPAL_ID, key: principalKey, agentPrincipalId: "prn_bench" },
            purpose: "bench purchases",
            ceiling: CEILING,
            cumulative: opts.cumulative?.(i) ?? CUMULATIVE,
            now,
            ...(opts.periods ? BENCH_PERIOD_LIMITS[opts.periods] : {}),
          });
        }
      }),
    );
  } finally {
    await pool.end();
  }
  return { orgId, operatorKey: String(key.token), agents };
}
