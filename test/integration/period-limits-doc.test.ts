/**
 * docs/how-to/limit-spend-per-period.md answers as shown: its mandate, delegation scope (YAML)
 * and recurring mandate are stored as written, the payments it describes are verified on a
 * fake clock at the instants it names, and the budget and the refusal it shows are what the
 * service answers.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mandate } from "../../src/core/agreement/index.js";
import type { Scope } from "../../src/core/delegation/index.js";
import { FakeClock } from "../helpers/period-model.js";
import { mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

const DOC = readFileSync(new URL("../../docs/how-to/limit-spend-per-period.md", import.meta.url), "utf8");

/** The fenced blocks of `lang` in the section headed `## title`. */
function blocks(title: string, lang: string): string[] {
  const start = DOC.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`no section ${title}`);
  const end = DOC.indexOf("\n## ", start + 1);
  const text = DOC.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] as string);
}
const only = (title: string, lang: string) => {
  const [b, ...rest] = blocks(title, lang);
  expect(rest).toEqual([]);
  return b as string;
};

const clock = new FakeClock(Date.parse("2027-03-28T09:00:00Z"));
let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld({ WRIT_DENIED_ATTEMPT_BURST: "0" }, { clock: clock.now });
}, 60_000);
afterAll(async () => {
  await w?.close();
});

const pay = (agentId: string, amount: number, currency: string, over: Record<string, unknown> = {}) =>
  w.verify({
    agent_id: agentId,
    action: { action_id: uid("act"), action_type: "purchase", amount, currency, proposed_at: new Date(clock.ms).toISOString(), ...over },
  });

describe("docs/how-to/limit-spend-per-period.md", () => {
  it("the groceries mandate and the delegation scope: the budget and the refusal shown", async () => {
    clock.ms = Date.parse("2027-03-28T09:00:00Z");
    const fields = JSON.parse(only("On a mandate", "json")) as Partial<Mandate>;
    const scope = (parse(only("On a delegation", "yaml")) as { spec: { scope: Scope } }).spec.scope;
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, {
      mandates: [mandate(agent_id, fields.intent_id as string, { ...fields, expires_at: "2027-12-31T00:00:00Z" })],
      delegation: { scope, over: { granted_at: "2027-03-27T00:00:00Z", expires_at: "2027-04-02T00:00:00Z" } },
    });
    expect((await pay(agent_id, 20, "EUR")).body.verdict).toBe("ALLOW");
    clock.ms = Date.parse("2027-03-28T10:00:00Z");
    expect((await pay(agent_id, 25, "EUR")).body.verdict).toBe("ALLOW");

    const r = await w.call("GET", `/v1/agreements/${agreementId}`, w.operatorKey);
    expect(r.status).toBe(200);
    const budget = r.body.budget as { intents: { periods: unknown[] }[]; delegation: { periods: unknown[] } };
    const shown = JSON.parse(only("What is left, and when it resets", "json")) as unknown[];
    expect(budget.intents[0]?.periods).toEqual(shown);
    // The serialised member order is the one shown.
    expect(JSON.stringify(budget.intents[0]?.periods)).toBe(JSON.stringify(shown));
    // The delegation's windows (a Berlin week of 200 EUR, 10 payments in a rolling day).
    expect(budget.delegation.periods).toMatchObject([
      { period: "week", time_zone: "Europe/Berlin", spent: "45.00", remaining: "155.00" },
      { rolling: "P1D", count: 2, count_remaining: 8 },
    ]);

    const refusal = await pay(agent_id, 10, "EUR");
    expect(refusal.body).toMatchObject(JSON.parse(only("The refusal", "json")) as Record<string, unknown>);
  });

  it("the recurring mandate: one payment per New York month, only to its merchant", async () => {
    const fields = JSON.parse(only("A recurring mandate", "json")) as Partial<Mandate>;
    const { agent_id } = await w.registerAgent(w.operatorKey);
    clock.ms = Date.parse("2027-01-31T12:00:00Z");
    await storeAgreement(w, {
      mandates: [mandate(agent_id, fields.intent_id as string, fields)],
      at: Date.parse("2026-12-31T00:00:00Z"),
      delegation: { scope: { currency: "USD" }, over: { granted_at: "2027-01-30T00:00:00Z", expires_at: "2027-02-05T00:00:00Z" } },
    });
    const streamflix = { merchant: "streamflix" };
    expect((await pay(agent_id, 12.99, "USD", streamflix)).body.verdict).toBe("ALLOW");
    // 1 February 04:59 UTC is still 31 January in New York.
    clock.ms = Date.parse("2027-02-01T04:59:00Z");
    expect((await pay(agent_id, 12.99, "USD", streamflix)).body).toMatchObject({ verdict: "DENY", reasons: ["PERIOD_COUNT_EXCEEDED"] });
    clock.ms = Date.parse("2027-02-01T05:00:00Z");
    expect((await pay(agent_id, 12.99, "USD", streamflix)).body.verdict).toBe("ALLOW");
    // Another merchant is not this mandate's (refused, or sent to the principal).
    expect((await pay(agent_id, 12.99, "USD", { merchant: "other" })).body.verdict).not.toBe("ALLOW");
  });
});
