/**
 * What limits per period cost the Postgres backend that runs a spend transaction
 * (docs/operations/benchmarks.md, "Limits per period"): the store's spend transaction
 * (`recordAllowedSpends`, the group commit's write path, without HTTP or the evaluation) of a
 * batch of BENCH_PERIODS_BATCH spends (default 12, about what bench:verify's (b) commits per
 * transaction), one per agent, on one connection, committed, for agreements whose intent has
 *   none:      no limit per period (the baseline, in the same run);
 *   intent3:   BENCH_PERIODS=1's intent limits (a calendar day and month in Europe/Berlin, a
 *              rolling 24 hours);
 *   calendar2: the day and month alone;
 *   rolling1:  the rolling 24 hours alone;
 * and, with BENCH_PERIODS_HOUR_FROM=N[,M...], intent3 again with WRIT_PERIOD_HOUR_COUNTERS_FROM N
 * (and M ...: the store's HOUR_COUNTERS_FROM otherwise), to weigh that setting in the same run;
 * and, with BENCH_PERIODS_DESIGN=1, a storage design for them measured before it is built
 * (./periods-design.ts): `four` (BENCH_PERIODS=1's four limits: intent3 and the delegation's
 * calendar week in New York, as the store keeps them now) beside the same four kept on the
 * owners' rows (`rows`, exact rolling windows; `rows-hourly`, rolling windows in whole hours);
 * in six alternating rounds of 1.5 s each (the order reversed every other round). Prints that
 * backend's CPU (/proc/<pid>/stat) per batch, round by round, its mean, the extra over `none`
 * per batch and per spend. Limits are ample: every spend is allowed.
 *
 *   npm run bench:periods-batch       (BENCH_PERIODS_BATCH=1: the cost of a transaction of one spend)
 *
 * An embedded Postgres on 127.0.0.1 (a port picked here), stopped at the end.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256 } from "../../src/core/canonical/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { mandatePeriods, preparePeriods } from "../../src/core/money/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { recordAllowedSpends, type AllowedSpend, type SpendPeriods } from "../../src/store/ledger/index.js";
import { migrate } from "../../src/store/migrate.js";
import { createOrg } from "../../src/store/orgs.js";
import { createPool } from "../../src/store/pool.js";
import { storeGrant } from "./grant.js";
import { DESIGN_OWNER_SQL, DESIGN_SIDES, designSql } from "./periods-design.js";
import { cpuPerRound } from "./proc-cpu.js";
import { BENCH_INTENT_PERIODS } from "./verify/seed.js";

const BIG = 1_000_000_000_000;
const BATCH = Number(process.env.BENCH_PERIODS_BATCH ?? 12);
/** BENCH_PERIODS_HOUR_FROM: hour-counter thresholds to run intent3 with besides the default. */
const HOUR_FROM = (process.env.BENCH_PERIODS_HOUR_FROM ?? "")
  .split(",")
  .filter((x) => x !== "")
  .map(Number);
const VARIANTS: Record<string, Record<string, unknown> | undefined> = {
  none: undefined,
  intent3: { ...BENCH_INTENT_PERIODS, period_limits: BENCH_INTENT_PERIODS.period_limits.map((l) => ({ ...l, amount: BIG })) },
  calendar2: {
    ...BENCH_INTENT_PERIODS,
    period_limits: BENCH_INTENT_PERIODS.period_limits.filter((l) => !("rolling" in l)).map((l) => ({ ...l, amount: BIG })),
  },
  rolling1: { ...BENCH_INTENT_PERIODS, period_limits: BENCH_INTENT_PERIODS.period_limits.filter((l) => "rolling" in l).map((l) => ({ ...l, amount: BIG })) },
};
/** BENCH_PERIODS_DESIGN=1: the storage design's sides (see the module comment). */
const DESIGN = process.env.BENCH_PERIODS_DESIGN === "1";
if (DESIGN) {
  VARIANTS.four = VARIANTS.intent3;
  for (const d of DESIGN_SIDES) VARIANTS[d] = undefined;
}
/** The delegation's calendar week of BENCH_PERIODS=1 (`four`), ample. */
const WEEK = preparePeriods([{ period: "week", amount: BIG }], "America/New_York", "USD");
for (const n of HOUR_FROM) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_PERIODS_HOUR_FROM: ${n} is not a whole number >= 1`);
  VARIANTS[`intent3@${n}`] = VARIANTS.intent3;
}
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const principalKey = signerFromSeed(sha256("writ bench periods principal").toString("hex"));
const dataDir = await mkdtemp(join(tmpdir(), "writ-bench-pb-"));
let pg: RunningPostgres | undefined;
let pool: ReturnType<typeof createPool> | undefined;
try {
  pg = await startPostgres({ dataDir, port: await freePort(), password: newPassword() });
  const dbUrl = pg.url("postgres");
  await migrate(dbUrl);
  const one = createPool(dbUrl, { max: 1 });
  pool = one;
  if (DESIGN) await pool.query(designSql());
  const org = await createOrg(pool, { name: "bench pb", org_type: "agent_operator" }, new Date());
  const sides: {
    name: string;
    agents: { agentId: string; agreementId: string; periods?: SpendPeriods[] }[];
    hourFrom?: number;
    i: number;
    us: number[];
  }[] = [];
  let n = 0;
  for (const [name, mandate] of Object.entries(VARIANTS)) {
    const agents = [];
    for (let k = 0; k < BATCH; k++) {
      const agentId = `agent-${name}-${k}`;
      const agreementId = `agr-${name}-${k}`;
      const delegationId = `del-${n++}`;
      await storeGrant(pool, {
        orgId: org.org_id,
        agentId,
        agreementId,
        delegationId,
        principal: { id: "biz_bench", key: principalKey, agentPrincipalId: "prn_bench" },
        purpose: "bench purchases",
        cumulative: BIG,
        ...(mandate ? { mandate } : {}),
      });
      const prepared = mandate ? mandatePeriods({ currency: "USD", ...(mandate as object) }) : undefined;
      const periods: SpendPeriods[] = prepared ? [{ owner: "intent", currency: "USD", amountMinor: 100n, periods: prepared }] : [];
      if (name === "four" && WEEK) periods.push({ owner: "delegation", delegationId, currency: "USD", amountMinor: 100n, periods: WEEK });
      if ((DESIGN_SIDES as readonly string[]).includes(name)) await pool.query(DESIGN_OWNER_SQL, [agentId, agreementId]);
      agents.push({ agentId, agreementId, ...(periods.length > 0 ? { periods } : {}) });
    }
    const hourFrom = name.includes("@") ? Number(name.split("@")[1]) : undefined;
    sides.push({
      name,
      agents,
      ...(hourFrom !== undefined ? { hourFrom } : {}),
      i: 0,
      us: [],
    });
  }
  const pid = (await pool.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]!.p;
  const batch = (s: (typeof sides)[number]): AllowedSpend[] =>
    s.agents.map((a) => ({
      agreementId: a.agreementId,
      agentId: a.agentId,
      intentId: "i1",
      actionId: `act-${s.i++}`,
      amountMinor: 100n,
      currency: "USD",
      at: new Date().toISOString(),
      ...(a.periods ? { limits: { periods: a.periods } } : {}),
    }));
  const opts = (s: (typeof sides)[number]) => (s.hourFrom !== undefined ? { hourCountersFrom: s.hourFrom } : {});
  for (const s of sides) for (let k = 0; k < 30; k++) await recordAllowedSpends(pool, batch(s), opts(s));
  for (let round = 0; round < 6; round++) {
    for (const s of round % 2 ? [...sides].reverse() : sides) {
      const { us } = await cpuPerRound(pid, 1.5, async () => {
        const r = await recordAllowedSpends(one, batch(s), opts(s));
        if (r.some((x) => !("recorded" in x) || !x.recorded)) throw new Error(JSON.stringify(r[0], (_, v) => (typeof v === "bigint" ? String(v) : v)));
      });
      s.us.push(us);
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const base = mean(sides[0]?.us ?? [0]);
  console.log(`backend CPU per spend transaction of ${BATCH} spends (one per agent, committed), 6 alternating rounds of 1.5 s`);
  for (const s of sides) {
    const m = mean(s.us);
    const extra = s === sides[0] ? "" : `   extra over none: ${fmt(m - base)} us a batch, ${fmt((m - base) / BATCH)} a spend (x${(m / base).toFixed(2)})`;
    console.log(`${s.name.padEnd(11)} mean ${fmt(m).padStart(6)} us   rounds ${s.us.map((u) => fmt(u)).join(", ")}${extra}`);
  }
  if (DESIGN) {
    // The prototype's statements ran for its sides: what they wrote (an event or share per spend, a state per agreement).
    const q = await one.query<{ events: string; shares: string; states: string; owners: string }>(
      `SELECT (SELECT count(*) FROM period_design_events)::text AS events, (SELECT count(*) FROM period_design_shares)::text AS shares,
              (SELECT count(*) FROM agreement_spend WHERE periods IS NOT NULL)::text AS states, (SELECT count(*) FROM period_design_owners WHERE state <> '{}')::text AS owners`,
    );
    const w = q.rows[0];
    const spends = (name: string) => sides.find((x) => x.name === name)?.i ?? 0;
    console.log(
      `design rows written: rows ${fmt(Number(w?.events))} events for ${fmt(spends("rows"))} spends, rows-hourly ${fmt(Number(w?.shares))} shares for ${fmt(spends("rows-hourly"))}; intent states ${w?.states}, delegation states ${w?.owners} (of the ${2 * BATCH} agreements of the two sides)`,
    );
  }
} finally {
  await pool?.end();
  await pg?.stop();
  await rm(dataDir, { recursive: true, force: true });
}
