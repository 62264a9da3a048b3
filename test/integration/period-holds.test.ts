/**
 * Holds × limits per period against real Postgres (issue 31): every release through
 * `releaseSpend` gives back its share of the period windows the ALLOW was counted in. A final
 * partial capture gives back the rest of the hold (amount) but the payment stays counted; a
 * void and an expiry of an uncaptured hold give back the amount and the payment; a refund that
 * restores budget gives back its amount. After every step the windows the read API shows
 * (`readPeriodUsage` and the core's `periodLine`, as src/api/routes/records/bodies.ts reads
 * them) equal what the spend transaction checks: the counters and the next spend's verdict.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, type Mandate } from "../../src/core/agreement/index.js";
import { formatMinor, mandatePeriods, periodLine } from "../../src/core/money/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import {
  expireHolds,
  ownerKey,
  readPeriodUsage,
  recordAllowedSpend,
  recordHoldStep,
  type HoldStepInput,
  type SpendPeriods,
} from "../../src/store/ledger/index.js";
import { principalKey, PRINCIPAL } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const AGREEMENT = "agr-period-holds";
const DAY = "2026-06-10";
const at = (hh: string) => `${DAY}T${hh}:00.000Z`;
// A day in Berlin of 100 EUR and 4 payments, and a rolling 24 hours of 100 EUR.
const periods = mandatePeriods({
  currency: "EUR",
  time_zone: "Europe/Berlin",
  period_limits: [
    { period: "day", amount: 100, count: 4 },
    { rolling: "PT24H", amount: 100 },
  ],
})!;
const AGENT = "agent-ph";
const owner = ownerKey(AGENT, AGREEMENT, "i1", { owner: "intent" });

async function allow(actionId: string, amountMinor: bigint, when: string) {
  const p: SpendPeriods[] = [{ owner: "intent", currency: "EUR", amountMinor, periods }];
  return recordAllowedSpend(pool, { agreementId: AGREEMENT, intentId: "i1", actionId, amountMinor, currency: "EUR", at: when, limits: { periods: p } });
}

async function step(actionId: string, s: HoldStepInput) {
  const r = await recordHoldStep(pool, { agreementId: AGREEMENT, actionId, step: s, at: at("12:00") });
  expect(r).toMatchObject({ recorded: true, replayed: false });
}

/** The windows as the read API shows them at `when`, and as the counters hold them: they must agree. */
async function windows(when: string): Promise<{ day: [string, number]; rolling: [string, number] }> {
  const ms = Date.parse(when);
  const spec = { agentId: AGENT, owner, currency: "EUR", periods, atMs: ms };
  const usage = await readPeriodUsage(pool, [spec]);
  const [dayLimit, rollingLimit] = periods.limits;
  const fmt = (v: bigint) => formatMinor(v, "EUR");
  const day = periodLine(dayLimit!, periods.timeZone, ms, usage(dayLimit!, spec), fmt);
  const rolling = periodLine(rollingLimit!, periods.timeZone, ms, usage(rollingLimit!, spec), fmt);
  const { rows } = await pool.query<{ spent: string; payments: number }>(
    "SELECT spent_minor::text AS spent, payments FROM period_spend WHERE agent_id = 'agent-ph' AND owner = $1 AND window_kind = 'day@Europe/Berlin'",
    [owner],
  );
  expect([formatMinor(BigInt(rows[0]?.spent ?? "0"), "EUR"), rows[0]?.payments ?? 0]).toEqual([day.spent, day.count]);
  expect(day.remaining).toBe(formatMinor(10_000n - BigInt(rows[0]?.spent ?? "0"), "EUR"));
  return { day: [day.spent, day.count], rolling: [rolling.spent, rolling.count] };
}

describe("holds, captures, voids, expiries and refunds give back their share of the period windows", () => {
  it("after every step the windows shown equal the windows checked", async () => {
    const m: Mandate = {
      intent_id: "i1",
      principal: { ...PRINCIPAL },
      agent: { agent_id: "agent-ph" },
      currency: "EUR",
      maximum_amount: 500,
      refunds_restore_budget: true,
    };
    const a = await buildSignedAgreement({ agreement_id: AGREEMENT, mandates: [m], at: "2026-01-01T00:00:00Z" }, principalKey);
    await withTransaction(pool, (c) => upsertAgreement(c, a, { orgId: "org_test" }));
    const now = at("11:00");

    // A hold of 40, captured 25 in a final partial capture: 15 go back, the payment stays counted.
    expect(await allow("cap", 4000n, at("08:00"))).toMatchObject({ recorded: true });
    await step("cap", { kind: "captured", key: "c1", amount: 25, final: true });
    expect(await windows(now)).toEqual({ day: ["25.00", 1], rolling: ["25.00", 1] });

    // A hold of 30, voided before any capture: the amount and the payment go back.
    expect(await allow("void", 3000n, at("08:10"))).toMatchObject({ recorded: true });
    expect(await windows(now)).toEqual({ day: ["55.00", 2], rolling: ["55.00", 2] });
    await step("void", { kind: "voided" });
    expect(await windows(now)).toEqual({ day: ["25.00", 1], rolling: ["25.00", 1] });

    // A hold of 30 captured in full, then 10 refunded with refunds_restore_budget: 10 go back, the payment stays.
    expect(await allow("ref", 3000n, at("08:20"))).toMatchObject({ recorded: true });
    await step("ref", { kind: "captured", key: "c2", amount: 30, final: true });
    expect(await windows(now)).toEqual({ day: ["55.00", 2], rolling: ["55.00", 2] });
    await step("ref", { kind: "refunded", key: "r1", amount: 10 });
    expect(await windows(now)).toEqual({ day: ["45.00", 2], rolling: ["45.00", 2] });

    // A hold of 20 left uncaptured expires: the amount and the payment go back.
    expect(await allow("exp", 2000n, at("08:30"))).toMatchObject({ recorded: true });
    expect(await windows(now)).toEqual({ day: ["65.00", 3], rolling: ["65.00", 3] });
    // Every other hold is closed: only this one is open to sweep.
    const swept = await expireHolds(pool, { before: new Date(Date.now() + 86_400_000), at: at("12:00") });
    expect(swept.expired).toBe(1);
    expect(await windows(now)).toEqual({ day: ["45.00", 2], rolling: ["45.00", 2] });

    // The spend transaction checks the same windows: 55 more fits the day exactly, 0.01 more does not.
    expect(await allow("over", 5501n, at("10:00"))).toMatchObject({ recorded: false, reason: "PERIOD_LIMIT_EXCEEDED" });
    expect(await allow("fits", 5500n, at("10:00"))).toMatchObject({ recorded: true });
    expect(await windows(now)).toEqual({ day: ["100.00", 3], rolling: ["100.00", 3] });
    // Voiding it frees one payment and its 55 again.
    await step("fits", { kind: "voided" });
    expect(await windows(now)).toEqual({ day: ["45.00", 2], rolling: ["45.00", 2] });
    // The count: two more payments fit the day's 4 (the released ones are not counted), a fifth does not.
    expect(await allow("p3", 100n, at("10:30"))).toMatchObject({ recorded: true });
    expect(await allow("p4", 100n, at("10:31"))).toMatchObject({ recorded: true });
    expect(await allow("p5", 100n, at("10:32"))).toMatchObject({ recorded: false, reason: "PERIOD_COUNT_EXCEEDED" });
    expect(await windows(now)).toEqual({ day: ["47.00", 4], rolling: ["47.00", 4] });
  });
});
