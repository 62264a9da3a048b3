/**
 * Limits per period in the spend transaction against real Postgres: calendar windows in a time
 * zone with DST (Europe/Berlin), rolling windows, count limits, a recurring mandate's one
 * payment per month and its occurrences, delegation period limits, exact limits under
 * concurrent spends, and a release (`failed`) that frees the window the spend was counted in.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { mandatePeriods, preparePeriods, type PeriodLimit, type Recurrence } from "../../src/core/money/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { ownerKey, readPeriodUsage, recordAllowedSpend, recordOutcome, type AllowedSpend, type SpendPeriods } from "../../src/store/ledger/index.js";
import { HOUR_COUNTERS_FROM } from "../../src/store/ledger/periods.js";
import { delegation as fixtureDelegation, iso, principalKey, PRINCIPAL } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 20 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const AGENT = "agent-periods";
const BERLIN = "Europe/Berlin";

async function storeAgreement(id: string, over: Partial<Mandate> = {}, delegationId?: string): Promise<Mandate> {
  const m: Mandate = { intent_id: "i1", principal: { ...PRINCIPAL }, agent: { agent_id: AGENT }, currency: "EUR", maximum_amount: 500, ...over };
  const a = await buildSignedAgreement({ agreement_id: id, mandates: [m], at: "2026-01-01T00:00:00Z" }, principalKey);
  await withTransaction(pool, (c) => upsertAgreement(c, a, { ...(delegationId ? { delegationId } : {}), orgId: "org_test" }));
  return m;
}

function intentPeriods(limits: PeriodLimit[], timeZone = BERLIN, recurrence?: Recurrence): SpendPeriods["periods"] {
  const p = mandatePeriods({ currency: "EUR", time_zone: timeZone, period_limits: limits, ...(recurrence ? { recurrence } : {}) });
  if (!p) throw new Error("no periods");
  return p;
}

const spend = (agreementId: string, actionId: string, amountMinor: bigint, at: string, periods: SpendPeriods[]): AllowedSpend => ({
  agreementId,
  intentId: "i1",
  actionId,
  amountMinor,
  currency: "EUR",
  at,
  limits: { periods },
});

describe("limits per period in the spend transaction", () => {
  it("counts a calendar day in Europe/Berlin across the spring DST change (a 23-hour day) and resets at local midnight", async () => {
    await storeAgreement("agr-day");
    const periods: SpendPeriods[] = [{ owner: "intent", currency: "EUR", amountMinor: 4000n, periods: intentPeriods([{ period: "day", amount: 100 }]) }];
    const at = (t: string) => spend("agr-day", `day-${t}`, 4000n, t, periods);
    // 2026-03-29 is 23 hours long in Berlin: it starts 2026-03-28T23:00Z and ends 2026-03-29T22:00Z.
    expect(await recordAllowedSpend(pool, at("2026-03-28T23:00:00.000Z"))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, at("2026-03-29T12:00:00.000Z"))).toMatchObject({ recorded: true });
    const third = await recordAllowedSpend(pool, at("2026-03-29T21:59:59.000Z"));
    expect(third).toMatchObject({ recorded: false, reason: "PERIOD_LIMIT_EXCEEDED" });
    expect((third as { message: string }).message).toContain("calendar day in Europe/Berlin");
    expect((third as { message: string }).message).toContain("resets at 2026-03-29T22:00:00.000Z");
    // The last instant of the previous Berlin day (22:59:59Z) counted in that day, not this one.
    expect(await recordAllowedSpend(pool, at("2026-03-28T22:59:59.000Z"))).toMatchObject({ recorded: true });
    // Local midnight of 30 March (22:00Z): a new window.
    expect(await recordAllowedSpend(pool, at("2026-03-29T22:00:00.000Z"))).toMatchObject({ recorded: true });
  });

  it("holds a count limit per ISO week (Monday start) and a rolling 24-hour amount", async () => {
    await storeAgreement("agr-week");
    const periods: SpendPeriods[] = [
      {
        owner: "intent",
        currency: "EUR",
        amountMinor: 1000n,
        periods: intentPeriods([
          { period: "week", count: 2 },
          { rolling: "PT24H", amount: 25 },
        ]),
      },
    ];
    const at = (id: string, t: string) => spend("agr-week", id, 1000n, t, periods);
    // Sunday 2026-06-07 in Berlin, then the rolling window refuses a third 10 EUR within 24 hours.
    expect(await recordAllowedSpend(pool, at("w1", "2026-06-07T10:00:00.000Z"))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, at("w2", "2026-06-07T11:00:00.000Z"))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, at("w3", "2026-06-07T12:00:00.000Z"))).toMatchObject({ recorded: false, reason: "PERIOD_COUNT_EXCEEDED" });
    // Monday 00:00 Berlin (Sunday 22:00Z): a new week, but the rolling window still holds 20 EUR.
    const r = await recordAllowedSpend(pool, {
      ...at("w4", "2026-06-07T22:00:00.000Z"),
      amountMinor: 600n,
      limits: { periods: [{ ...periods[0]!, amountMinor: 600n }] },
    });
    expect(r).toMatchObject({ recorded: false, reason: "PERIOD_LIMIT_EXCEEDED" });
    expect((r as { message: string }).message).toContain("rolling window PT24H");
    expect(
      await recordAllowedSpend(pool, {
        ...at("w5", "2026-06-07T22:00:00.000Z"),
        amountMinor: 500n,
        limits: { periods: [{ ...periods[0]!, amountMinor: 500n }] },
      }),
    ).toMatchObject({
      recorded: true,
    });
    // 24 hours after the first spend it leaves the rolling window (w2 + w5 + 10 EUR = 25 EUR); the week's second payment.
    expect(await recordAllowedSpend(pool, at("w6", "2026-06-08T09:59:59.999Z"))).toMatchObject({ recorded: false, reason: "PERIOD_LIMIT_EXCEEDED" });
    expect(await recordAllowedSpend(pool, at("w7", "2026-06-08T10:00:00.000Z"))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, at("w8", "2026-06-09T12:00:00.000Z"))).toMatchObject({ recorded: false, reason: "PERIOD_COUNT_EXCEEDED" });
  });

  it("never beats a daily limit under 60 concurrent spends", async () => {
    await storeAgreement("agr-conc");
    const periods: SpendPeriods[] = [
      { owner: "intent", currency: "EUR", amountMinor: 700n, periods: intentPeriods([{ period: "day", amount: 100, count: 12 }]) },
    ];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => recordAllowedSpend(pool, spend("agr-conc", `c-${i}`, 700n, "2026-07-01T08:00:00.000Z", periods))),
    );
    // 14 x 7 EUR fit 100 EUR, but the count limit is 12.
    expect(results.filter((r) => r.recorded)).toHaveLength(12);
    const usage = await readPeriodUsage(pool, [
      {
        agentId: AGENT,
        owner: ownerKey(AGENT, "agr-conc", "i1", { owner: "intent" }),
        currency: "EUR",
        periods: periods[0]!.periods,
        atMs: Date.parse("2026-07-01T20:00:00Z"),
      },
    ]);
    expect(
      usage(periods[0]!.periods.limits[0]!, {
        owner: ownerKey(AGENT, "agr-conc", "i1", { owner: "intent" }),
        currency: "EUR",
        periods: periods[0]!.periods,
        atMs: Date.parse("2026-07-01T20:00:00Z"),
      }),
    ).toEqual({ spentMinor: 8400n, count: 12 });
  });

  it("a release frees the window the spend was counted in, not the current one", async () => {
    await storeAgreement("agr-rel");
    const p = intentPeriods([
      { period: "month", amount: 50 },
      { rolling: "P1D", count: 5 },
    ]);
    const periods: SpendPeriods[] = [{ owner: "intent", currency: "EUR", amountMinor: 5000n, periods: p }];
    expect(await recordAllowedSpend(pool, spend("agr-rel", "may", 5000n, "2026-05-31T21:00:00.000Z", periods))).toMatchObject({ recorded: true });
    // 2026-05-31T22:00Z is June in Berlin: a new month.
    expect(await recordAllowedSpend(pool, spend("agr-rel", "june", 5000n, "2026-05-31T22:00:00.000Z", periods))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, spend("agr-rel", "june-2", 5000n, "2026-06-02T08:00:00.000Z", periods))).toMatchObject({
      recorded: false,
      reason: "PERIOD_LIMIT_EXCEEDED",
    });
    // Releasing the May spend leaves June full.
    expect(await recordOutcome(pool, { agreementId: "agr-rel", actionId: "may", outcome: "failed", at: "2026-06-02T08:00:00.000Z" })).toMatchObject({
      recorded: true,
    });
    expect(await recordAllowedSpend(pool, spend("agr-rel", "june-3", 5000n, "2026-06-02T08:00:01.000Z", periods))).toMatchObject({
      recorded: false,
      reason: "PERIOD_LIMIT_EXCEEDED",
    });
    // Releasing the June spend frees June.
    expect(await recordOutcome(pool, { agreementId: "agr-rel", actionId: "june", outcome: "failed", at: "2026-06-02T08:00:02.000Z" })).toMatchObject({
      recorded: true,
    });
    expect(await recordAllowedSpend(pool, spend("agr-rel", "june-4", 5000n, "2026-06-02T08:00:03.000Z", periods))).toMatchObject({ recorded: true });
    const { rows } = await pool.query<{ window_kind: string; window_start: Date; spent_minor: string; payments: number }>(
      "SELECT window_kind, window_start, spent_minor::text, payments FROM period_spend WHERE agent_id = $1 AND owner = $2 ORDER BY window_kind, window_start",
      [AGENT, ownerKey(AGENT, "agr-rel", "i1", { owner: "intent" })],
    );
    // The months (a rolling window of so few payments has no hour counters).
    expect(rows.map((r) => [r.window_kind, r.window_start.toISOString(), r.spent_minor, r.payments])).toEqual([
      ["month@Europe/Berlin", "2026-04-30T22:00:00.000Z", "0", 0],
      ["month@Europe/Berlin", "2026-05-31T22:00:00.000Z", "5000", 1],
    ]);
  });

  it("sums a rolling window exactly from its whole hours, the events of its first hour and the events not counted in an hour", async () => {
    await storeAgreement("agr-hours");
    const owner = ownerKey(AGENT, "agr-hours", "i1", { owner: "intent" });
    const p = intentPeriods([{ rolling: "PT3H", amount: 1000, count: 100 }]);
    const periods = (m: bigint): SpendPeriods[] => [{ owner: "intent", currency: "EUR", amountMinor: m, periods: p }];
    // HOUR_COUNTERS_FROM - 1 payments of 0.10 EUR at 09:10, written as before hour counters (not
    // bucketed, in no hour counter): with them the window is full enough that the spends below
    // are counted in their hours.
    await pool.query(
      `INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor, windows, keep_until)
       SELECT $1, 'agr-hours', 'legacy-' || i, $2, 'EUR', '2026-08-01T09:10:00Z', 10, 10, '[]', '2026-08-02T00:00:00Z' FROM generate_series(1, $3::int) i`,
      [AGENT, owner, HOUR_COUNTERS_FROM - 1],
    );
    const legacy = BigInt(10 * (HOUR_COUNTERS_FROM - 1));
    // Spends across three hours: 09:20, 09:50 (the hour of the window's bound below), 10:30, 11:59:59.999.
    for (const [id, t, m] of [
      ["h1", "2026-08-01T09:20:00.000Z", 100n],
      ["h2", "2026-08-01T09:50:00.000Z", 200n],
      ["h3", "2026-08-01T10:30:00.000Z", 400n],
      ["h4", "2026-08-01T11:59:59.999Z", 800n],
    ] as const) {
      expect(await recordAllowedSpend(pool, spend("agr-hours", id, m, t, periods(m)))).toMatchObject({ recorded: true });
    }
    const hours = await pool.query<{ window_start: Date; spent_minor: string; payments: number }>(
      "SELECT window_start, spent_minor::text, payments FROM period_spend WHERE agent_id = $1 AND owner = $2 AND window_kind = 'bucket@PT1H' ORDER BY 1",
      [AGENT, owner],
    );
    expect(hours.rows.map((r) => [r.window_start.toISOString(), r.spent_minor, r.payments])).toEqual([
      ["2026-08-01T09:00:00.000Z", "300", 2],
      ["2026-08-01T10:00:00.000Z", "400", 1],
      ["2026-08-01T11:00:00.000Z", "800", 1],
    ]);
    const usageAt = async (at: string) => {
      const atMs = Date.parse(at);
      const read = await readPeriodUsage(pool, [{ agentId: AGENT, owner, currency: "EUR", periods: p, atMs }]);
      return read(p.limits[0]!, { owner, currency: "EUR", periods: p, atMs });
    };
    // At 12:40 the window is (09:40, 12:40]: h2 of the first hour by itself, h3 and h4 in their
    // hours; h1 and the payments of 09:10 are before it.
    expect(await usageAt("2026-08-01T12:40:00.000Z")).toEqual({ spentMinor: 1400n, count: 3, oldestMs: Date.parse("2026-08-01T09:50:00.000Z") });
    // At 12:05 the window is (09:05, 12:05]: the payments of 09:10 (not bucketed) are in it too,
    // and the oldest.
    expect(await usageAt("2026-08-01T12:05:00.000Z")).toEqual({
      spentMinor: legacy + 1500n,
      count: HOUR_COUNTERS_FROM - 1 + 4,
      oldestMs: Date.parse("2026-08-01T09:10:00.000Z"),
    });
    // The bound on an hour (10:00): the hour 10:00 to 11:00 is summed whole, the hour holding the
    // bound by its events after it (none).
    expect(await usageAt("2026-08-01T13:00:00.000Z")).toEqual({ spentMinor: 1200n, count: 2, oldestMs: Date.parse("2026-08-01T10:30:00.000Z") });
    // h4 alone at the last instant it counts (the window (11:59:59.998, 14:59:59.998]), and
    // gone exactly 3 hours after it.
    expect(await usageAt("2026-08-01T14:59:59.998Z")).toEqual({ spentMinor: 800n, count: 1, oldestMs: Date.parse("2026-08-01T11:59:59.999Z") });
    expect(await usageAt("2026-08-01T14:59:59.999Z")).toEqual({ spentMinor: 0n, count: 0 });
    // The spend transaction checks the same sums: at 12:05, 1000.00 EUR less what the window holds is left.
    const left = 100_000n - legacy - 1500n;
    expect(await recordAllowedSpend(pool, spend("agr-hours", "h5", left + 1n, "2026-08-01T12:05:00.000Z", periods(left + 1n)))).toMatchObject({
      recorded: false,
      reason: "PERIOD_LIMIT_EXCEEDED",
    });
    expect(await recordAllowedSpend(pool, spend("agr-hours", "h6", left, "2026-08-01T12:05:00.000Z", periods(left)))).toMatchObject({ recorded: true });
    // A release takes a spend out of its hour's counter: h3 failed, 12:40 holds h2, h4 and h6.
    expect(await recordOutcome(pool, { agreementId: "agr-hours", actionId: "h3", outcome: "failed", at: "2026-08-01T12:06:00.000Z" })).toMatchObject({
      recorded: true,
    });
    expect(await usageAt("2026-08-01T12:40:00.000Z")).toEqual({ spentMinor: 1000n + left, count: 3, oldestMs: Date.parse("2026-08-01T09:50:00.000Z") });
    const after = await pool.query<{ spent_minor: string; payments: number }>(
      "SELECT spent_minor::text, payments FROM period_spend WHERE agent_id = $1 AND owner = $2 AND window_kind = 'bucket@PT1H' AND window_start = '2026-08-01T10:00:00Z'",
      [AGENT, owner],
    );
    expect(after.rows).toEqual([{ spent_minor: "0", payments: 0 }]);
  });

  it("a recurring mandate: one payment per month, at most 3 in all", async () => {
    await storeAgreement("agr-rec");
    const periods: SpendPeriods[] = [
      { owner: "intent", currency: "EUR", amountMinor: 1999n, periods: intentPeriods([], "America/New_York", { frequency: "month", occurrences: 3 }) },
    ];
    const at = (id: string, t: string) => spend("agr-rec", id, 1999n, t, periods);
    expect(await recordAllowedSpend(pool, at("jan", "2026-01-15T12:00:00.000Z"))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, at("jan-2", "2026-02-01T04:59:59.000Z"))).toMatchObject({ recorded: false, reason: "PERIOD_COUNT_EXCEEDED" });
    expect(await recordAllowedSpend(pool, at("feb", "2026-02-01T05:00:00.000Z"))).toMatchObject({ recorded: true });
    expect(await recordAllowedSpend(pool, at("mar", "2026-03-31T12:00:00.000Z"))).toMatchObject({ recorded: true });
    const fourth = await recordAllowedSpend(pool, at("apr", "2026-04-02T12:00:00.000Z"));
    expect(fourth).toMatchObject({ recorded: false, reason: "PERIOD_COUNT_EXCEEDED" });
    expect((fourth as { message: string }).message).toContain("total");
  });

  it("holds a delegation's period limit across its agreements", async () => {
    const d = fixtureDelegation(undefined, {
      delegation_id: "del-periods",
      agent: { agent_id: AGENT },
      delegation_chain: [],
      scope: { currency: "EUR", maximum_amount: 500, time_zone: BERLIN, period_limits: [{ period: "day", amount: 30 }] },
    });
    await withTransaction(pool, (c) => upsertDelegation(c, d));
    await storeAgreement("agr-dp1", {}, "del-periods");
    await storeAgreement("agr-dp2", {}, "del-periods");
    const periods = preparePeriods(d.scope.period_limits, d.scope.time_zone, "EUR")!;
    const p: SpendPeriods[] = [{ owner: "delegation", delegationId: "del-periods", currency: "EUR", amountMinor: 500n, periods }];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => recordAllowedSpend(pool, spend(i % 2 ? "agr-dp1" : "agr-dp2", `dp-${i}`, 500n, "2026-08-01T09:00:00.000Z", p))),
    );
    expect(results.filter((r) => r.recorded)).toHaveLength(6);
    expect(new Set(results.flatMap((r) => (r.recorded ? [] : [r.reason])))).toEqual(new Set(["PERIOD_LIMIT_EXCEEDED"]));
    expect(iso(Date.parse("2026-08-01T09:00:00.000Z"))).toBe("2026-08-01T09:00:00.000Z");
  });

  it("never counts a spend in a window counter the read found but that is gone: the write aborts", async () => {
    const counter = (found: boolean) =>
      JSON.stringify([
        { g: AGENT, o: JSON.stringify(["intent", AGENT, "agr-none", "i1"]), c: "EUR", w: "day@UTC", s: "2026-09-01T00:00:00.000Z", m: "100", n: 1, e: found },
      ]);
    // The read said the counter exists (e: true), but no such row: the UPDATE raises nothing, so the write refuses.
    await expect(pool.query("SELECT writ_period_write('[]'::jsonb, $1::jsonb)", [counter(true)])).rejects.toThrow(/period counters found by the read are gone/);
    // Not found by the read (e: false): inserted.
    await pool.query("SELECT writ_period_write('[]'::jsonb, $1::jsonb)", [counter(false)]);
    const { rows } = await pool.query("SELECT spent_minor::text AS m, payments FROM period_spend WHERE agent_id = $1 AND window_kind = 'day@UTC'", [AGENT]);
    expect(rows).toEqual([{ m: "100", payments: 1 }]);
  });
});
