/**
 * What a rolling window costs a spend as it fills (docs/how-to/limit-spend-per-period.md;
 * migrations/0600_period_hour_buckets.sql): the spend transaction of the store
 * (`recordAllowedSpend`, the ALLOW's write path without HTTP or the evaluation) of an agreement
 * whose intent has a rolling limit (24 hours; BENCH_ROLLING_WINDOW: another ISO 8601 duration of
 * days or hours, up to the 366 days a limit may span), one caller, after N payments in the
 * window, for
 *   (a) hours: the window's payments as the spend transaction writes them, each event counted in
 *       its UTC hour's counter (the read sums the hours after the window's first, and that
 *       hour's events);
 *   (b) events alone, the baseline in the same run: the same payments as events not counted in
 *       an hour (as written before hour counters), which the read sums one by one, as every
 *       rolling window was read before.
 * The N payments are written straight into the tables (spread evenly over the window less its
 * last hour),
 * then (a) and (b) alternate in rounds of BENCH_ROLLING_ROUND spends until each made
 * BENCH_ROLLING_SPENDS (default 400), on a connection of their own. Prints per N the median and
 * p99 of a spend, b/a, and the CPU that connection's backend spent per spend (/proc: what the
 * window costs Postgres, which latency on a shared host shows only through its noise).
 *
 *   npm run bench:rolling      (BENCH_ROLLING_EVENTS=100,1000,10000 by default)
 *   BENCH_ROLLING_WINDOW=P366D BENCH_ROLLING_EVENTS=10000 npm run bench:rolling
 *
 * An embedded Postgres on 127.0.0.1 (a port picked here), stopped at the end.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256 } from "../../src/core/canonical/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { mandatePeriods, parseRollingDuration } from "../../src/core/money/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { ownerKey, recordAllowedSpend, type AllowedSpend, type SpendPeriods } from "../../src/store/ledger/index.js";
import { migrate } from "../../src/store/migrate.js";
import { createOrg } from "../../src/store/orgs.js";
import { createPool } from "../../src/store/pool.js";
import { storeGrant } from "./grant.js";
import { cpuSeconds } from "./proc-cpu.js";

const EVENTS = (process.env.BENCH_ROLLING_EVENTS ?? "100,1000,10000").split(",").map(Number);
const SPENDS = Number(process.env.BENCH_ROLLING_SPENDS ?? 400);
const ROUND = Number(process.env.BENCH_ROLLING_ROUND ?? 50);
const BIG = 1_000_000_000;
/** BENCH_ROLLING_WINDOW: the rolling limit's duration (default PT24H). */
const WINDOW = process.env.BENCH_ROLLING_WINDOW ?? "PT24H";
const WINDOW_MS = parseRollingDuration(WINDOW);
if (WINDOW_MS === undefined || WINDOW_MS < 2 * 3_600_000)
  throw new Error(`BENCH_ROLLING_WINDOW: ${WINDOW} is not a duration of 2 hours or more that a rolling limit takes`);
/** The payments are spread over the window less its last hour (ms). */
const SPREAD_MS = WINDOW_MS - 3_600_000;
const MANDATE = { time_zone: "UTC", period_limits: [{ rolling: WINDOW, amount: BIG }] };
const PERIODS = mandatePeriods({ currency: "USD", ...MANDATE });
const principalKey = signerFromSeed(sha256("writ bench rolling principal").toString("hex"));
type Pool = ReturnType<typeof createPool>;

/** The payments in the window of `agentId`'s agreement: `n` events over the window less its last hour, with their hour counters when `hours`. */
async function fill(pool: Pool, agentId: string, agreementId: string, n: number, hours: boolean): Promise<void> {
  const owner = ownerKey(agentId, agreementId, "i1", { owner: "intent" });
  await pool.query(
    `INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor, windows, keep_until, bucketed)
     SELECT $1, $2, 'past-' || i, $3, 'USD', now() - (i * ($6::float8 / $4)) * interval '1 millisecond', 100, 100,
            CASE WHEN $5 THEN jsonb_build_array(jsonb_build_array('bucket@PT1H', date_trunc('hour', now() - (i * ($6::float8 / $4)) * interval '1 millisecond'))) ELSE '[]' END,
            now() + ($6::float8 + 86400000) * interval '1 millisecond', $5
     FROM generate_series(1, $4::int) i`,
    [agentId, agreementId, owner, n, hours, SPREAD_MS],
  );
  if (hours)
    await pool.query(
      `INSERT INTO period_spend (agent_id, owner, currency, window_kind, window_start, spent_minor, payments)
       SELECT agent_id, owner, currency, 'bucket@PT1H', date_trunc('hour', at, 'UTC'), sum(amount_minor), count(*) FROM period_events
       WHERE agent_id = $1 GROUP BY 1, 2, 3, 4, 5`,
      [agentId],
    );
  await pool.query("VACUUM ANALYZE period_events");
  await pool.query("VACUUM ANALYZE period_spend");
}

function spend(agentId: string, agreementId: string, i: number): AllowedSpend {
  const periods: SpendPeriods[] = [{ owner: "intent", currency: "USD", amountMinor: 100n, periods: PERIODS! }];
  return { agreementId, agentId, intentId: "i1", actionId: `now-${i}`, amountMinor: 100n, currency: "USD", at: new Date().toISOString(), limits: { periods } };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-rolling-"));
  let pg: RunningPostgres | undefined;
  let pool: Pool | undefined;
  let spender: Pool | undefined;
  try {
    pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword() });
    const dbUrl = pg.url("postgres");
    await migrate(dbUrl);
    pool = createPool(dbUrl, { max: 2 });
    // The spends' own connection: its backend's CPU is what a spend costs Postgres.
    const one = createPool(dbUrl, { max: 1 });
    spender = one;
    const pid = (await one.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]?.p;
    const org = await createOrg(pool, { name: "bench rolling", org_type: "agent_operator" }, new Date());
    console.log(`Postgres on ${new URL(dbUrl).host}; one caller; ${SPENDS} spends per line, a rolling ${WINDOW} limit on the intent`);
    let n = 0;
    for (const events of EVENTS) {
      const sides = [];
      for (const hours of [true, false]) {
        const agentId = `agent-rolling-${events}-${hours ? "hours" : "events"}`;
        const agreementId = `agr-rolling-${n++}`;
        await storeGrant(pool, {
          orgId: org.org_id,
          agentId,
          agreementId,
          delegationId: `del-rolling-${n}`,
          principal: { id: "biz_bench", key: principalKey, agentPrincipalId: "prn_bench" },
          purpose: "bench purchases",
          cumulative: BIG,
          mandate: MANDATE,
        });
        await fill(pool, agentId, agreementId, events, hours);
        sides.push({ agentId, agreementId, ms: [] as number[], i: 0, cpu: 0 });
      }
      for (let done = 0; done < SPENDS; done += ROUND) {
        for (const s of sides) {
          const cpu0 = cpuSeconds(pid);
          for (let k = 0; k < ROUND; k++) {
            const t0 = process.hrtime.bigint();
            const r = await recordAllowedSpend(one, spend(s.agentId, s.agreementId, s.i++));
            s.ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
            if (!r.recorded) throw new Error(`spend refused: ${JSON.stringify(r)}`);
          }
          const cpu1 = cpuSeconds(pid);
          if (cpu0 !== undefined && cpu1 !== undefined) s.cpu += cpu1 - cpu0;
        }
      }
      const [a, b] = sides.map((s) => ({ p50: quantile(s.ms, 0.5), p99: quantile(s.ms, 0.99), cpuUs: (s.cpu * 1e6) / s.ms.length })) as [
        { p50: number; p99: number; cpuUs: number },
        { p50: number; p99: number; cpuUs: number },
      ];
      const f = (x: number) => x.toFixed(2).padStart(6);
      console.log(
        `${String(events).padStart(6)} payments in the window: (a) hours p50 ${f(a.p50)} ms p99 ${f(a.p99)} ms   (b) events alone p50 ${f(b.p50)} ms p99 ${f(b.p99)} ms   b/a p50 ${(b.p50 / a.p50).toFixed(2)}` +
          (pid !== undefined ? `   backend CPU a spend: (a) ${Math.round(a.cpuUs)} us (b) ${Math.round(b.cpuUs)} us` : ""),
      );
    }
  } finally {
    await spender?.end();
    await pool?.end();
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
