/**
 * The portal's budget lines in a real browser (headless Debian Chromium through playwright-core):
 * a principal signs in and sees, for an agreement whose intent has a day limit in a time zone
 * with DST (an amount and a count) and whose delegation has a week limit and a rolling window,
 * after one ALLOW that the payment side captured in part: each window's remaining of its limit,
 * payments left and reset time, and the held/captured split, exactly as the read API
 * (`GET /v1/agreements/{id}`) says. A recurring mandate reads as one ("recurring: once a
 * month, at most 12 times"). The expected texts are computed here from the API's JSON (the
 * service's clock is real, so the windows and resets are whatever the API answers), formatted
 * the way the page is specified to: the test's own rules, not the page's code.
 * Screenshot: docs/screenshots/portal-periods.png (written with WRIT_UPDATE_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let browser: TestBrowser;

beforeAll(async () => {
  w = await startVerifyWorld({ BUR_DEV_MAILBOX: "1" });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

interface Period {
  period?: string;
  rolling?: string;
  time_zone?: string;
  resets_at?: string;
  limit?: string;
  spent: string;
  remaining?: string;
  count_limit?: number;
  count: number;
  count_remaining?: number;
}
interface Line {
  currency: string;
  maximum_amount?: string;
  limit?: string;
  spent?: string;
  remaining?: string;
  held?: string;
  captured?: string;
  periods?: Period[];
}

/** The reset time as the page's browser shows it (launchBrowser: locale en-GB, time zone UTC). */
const resetTime = (iso: string) => new Date(iso).toLocaleString("en-GB", { timeZone: "UTC" });

/** What a principal reads for one window (the wording the portal is held to). */
function expectedPeriod(p: Period, currency: string): string {
  const names: Record<string, string> = { day: "today", week: "this week", month: "this month", quarter: "this quarter", year: "this year" };
  const durations: Record<string, string> = { PT24H: "24 hours", P7D: "7 days" };
  const name = p.rolling
    ? `in the last ${durations[p.rolling]}`
    : p.period === "total"
      ? "in all"
      : `${names[p.period as string]}${p.time_zone ? ` in ${p.time_zone}` : ""}`;
  const bits = [p.remaining !== undefined ? `${p.remaining} of ${p.limit} ${currency} left` : `${p.spent} ${currency} spent`];
  if (p.count_limit !== undefined) bits.push(`${p.count_remaining} of ${p.count_limit} payment${p.count_limit === 1 ? "" : "s"} left`);
  if (p.resets_at) bits.push(`${p.rolling ? "the oldest payment in it leaves it" : "resets"} ${resetTime(p.resets_at)}`);
  return `${name}: ${bits.join(", ")}`;
}

describe("the portal's limits per period and holds in a browser", () => {
  it("shows each window's remaining, payments left and reset, and held vs captured, as the read API says", async () => {
    const { page } = browser;
    const email = "periods@example.test";
    expect((await w.call("POST", "/v1/portal/magic-link", null, { email })).status).toBe(200);
    await expect.poll(async () => (await w.call("GET", "/v1/dev/mailbox")).body.email, { timeout: 10_000 }).toBe(email);
    await page.goto((await w.call("GET", "/v1/dev/mailbox")).body.link as string);
    await page.getByRole("button", { name: "Continue signing in" }).click();
    await page.waitForURL(`${w.server.url}/portal/`);
    const session = (await page.evaluate<string | null>('sessionStorage.getItem("writ.session")')) ?? "";
    const principalId = (await w.call("GET", "/v1/portal/me", session)).body.principal_id as string;

    // An agent of this principal: groceries with a day limit in New York (amount and count),
    // under a delegation with a week limit in Berlin and a rolling 24 hours; and a subscription.
    const { agent_id: agentId } = await w.registerAgent(w.operatorKey, { principal_id: principalId });
    const { agreementId, delegationId } = await storeAgreement(w, {
      mandates: [
        mandate(agentId, "groceries", {
          maximum_amount: 100,
          cumulative_maximum: 300,
          time_zone: "America/New_York",
          period_limits: [{ period: "day", amount: 150, count: 3 }],
        }),
      ],
      delegation: {
        scope: {
          maximum_amount: 200,
          cumulative_maximum: 1000,
          time_zone: "Europe/Berlin",
          period_limits: [
            { period: "week", amount: 500, count: 20 },
            { rolling: "PT24H", amount: 250 },
          ],
        },
      },
    });
    const { agreementId: subscriptionId } = await storeAgreement(w, {
      mandates: [
        mandate(agentId, "streaming", {
          maximum_amount: 12.99,
          time_zone: "America/New_York",
          recurrence: { frequency: "month", occurrences: 12 },
        }),
      ],
    });

    // One ALLOW of 40 USD, captured 25 by the payment side (15 still held); one subscription payment.
    const bought = action({ amount: 40, merchant: "Corner Market", intent_id: "groceries" });
    expect((await w.verify({ agent_id: agentId, action: bought })).body.verdict).toBe("ALLOW");
    const capture = await w.outcome({ agreement_id: agreementId, action_id: bought.action_id, outcome: "captured", amount: 25, idempotency_key: "ship-1" });
    expect(capture.status).toBe(200);
    const streamed = action({ amount: 12.99, merchant: "Streamflix", intent_id: "streaming" });
    expect((await w.verify({ agent_id: agentId, action: streamed })).body.verdict).toBe("ALLOW");
    const full = await w.outcome({
      agreement_id: subscriptionId,
      action_id: streamed.action_id,
      outcome: "captured",
      amount: 12.99,
      idempotency_key: "month-1",
    });
    expect(full.status).toBe(200);

    // The read API's budget: what the page must show.
    const read = await w.call("GET", `/v1/agreements/${agreementId}`, w.operatorKey);
    expect(read.status).toBe(200);
    const budget = read.body.budget as { intents: (Line & { intent_id: string })[]; delegation: Line & { delegation_id: string } };
    const intent = budget.intents[0] as Line & { intent_id: string };
    expect(intent).toMatchObject({ intent_id: "groceries", spent: "40.00", held: "15.00", captured: "25.00" });
    expect(intent.periods?.map((p) => p.period)).toEqual(["day"]);
    expect(intent.periods?.[0]).toMatchObject({ time_zone: "America/New_York", limit: "150.00", spent: "40.00", count_limit: 3, count: 1 });
    expect(budget.delegation.periods?.length).toBe(2);
    const subscription = (await w.call("GET", `/v1/agreements/${subscriptionId}`, w.operatorKey)).body.budget as { intents: Line[] };
    const streaming = subscription.intents[0] as Line;
    expect(streaming).toMatchObject({ spent: "12.99", held: "0.00", captured: "12.99" });
    expect(streaming.periods?.map((p) => p.period)).toEqual(["month", "total"]);

    const expectedIntent =
      `intent groceries: ${intent.remaining} of ${intent.limit} USD left, ${intent.spent} spent ` +
      `(${intent.captured} captured, ${intent.held} held, not captured yet), ` + // the split shows while part is on hold
      `at most ${intent.maximum_amount} a payment; ${expectedPeriod(intent.periods?.[0] as Period, "USD")}`;
    const expectedDelegation =
      `delegation ${delegationId}: ${budget.delegation.remaining} of ${budget.delegation.limit} USD left, ` +
      `at most ${budget.delegation.maximum_amount} a payment; ` +
      (budget.delegation.periods ?? []).map((p) => expectedPeriod(p, "USD")).join("; ");
    const expectedStreaming =
      `intent streaming: recurring once a month in America/New_York, at most 12 times, ` +
      `${streaming.spent} USD spent, no total limit, at most ${streaming.maximum_amount} a payment; ` +
      (streaming.periods ?? []).map((p) => expectedPeriod(p, "USD")).join("; ");
    // The words a principal reads, spelled out once (the helpers above build the rest).
    expect(expectedIntent).toContain("today in America/New_York: 110.00 of 150.00 USD left, 2 of 3 payments left, resets ");
    expect(expectedDelegation).toContain("in the last 24 hours: 210.00 of 250.00 USD left, the oldest payment in it leaves it ");
    expect(expectedStreaming).toContain("this month in America/New_York: 12.99 USD spent, 0 of 1 payment left, resets ");
    expect(expectedStreaming).toContain("in all: 12.99 USD spent, 11 of 12 payments left");

    await page.reload();
    const row = page.locator("#agreements tbody tr", { hasText: agreementId });
    await row.waitFor();
    const lines = await row.locator("ul.budget li").allTextContents();
    expect(lines).toEqual([expectedIntent, expectedDelegation]);
    const subscriptionLines = await page.locator("#agreements tbody tr", { hasText: subscriptionId }).locator("ul.budget li").allTextContents();
    expect(subscriptionLines[0]).toBe(expectedStreaming);
    // The delegations table shows the delegation's own line, the same windows.
    const delegationRow = page.locator("#delegations tbody tr", { hasText: delegationId as string });
    const delegationCell = delegationRow.locator('td[data-label="Remaining budget"]');
    expect(await delegationCell.textContent()).toBe(expectedDelegation.slice(`delegation ${delegationId}: `.length));
    await browser.screenshot("portal-periods", { fullPage: true });
  });
});
