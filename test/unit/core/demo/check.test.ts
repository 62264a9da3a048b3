import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDemoCheckRequest, runDemoCheck } from "../../../../src/core/demo/index.js";

const NOW = new Date("2026-03-02T09:30:00Z");

function request(maximum: number, amount: number, includeExpiry = true, timeLimit = "2026-03-09") {
  return parseDemoCheckRequest({
    intent: { maximum_amount: maximum, currency: "USD", category: "travel", include_expiry: includeExpiry, time_limit: timeLimit },
    payment: { amount, currency: "USD", merchant: "Any Airline", item: "ticket" },
  });
}

describe("runDemoCheck", () => {
  it("allows within the ceiling, denies above it, steps up without an expiry", async () => {
    expect(await runDemoCheck(request(100, 100), NOW)).toMatchObject({ verdict: "ALLOW", svc_decision: "ALLOW", reasons: [], required_action: "NONE" });
    expect(await runDemoCheck(request(100, 100.01), NOW)).toMatchObject({
      verdict: "DENY",
      svc_decision: "BLOCK",
      reasons: ["AMOUNT_ABOVE_INTENT_CEILING"],
    });
    expect(await runDemoCheck(request(100, 1, false), NOW)).toMatchObject({ verdict: "STEP_UP", reasons: ["OVER_BROAD_INTENT"] });
  });

  it("reports the fixed demo identities and the signed mandate", async () => {
    const r = await runDemoCheck(request(100, 1), NOW);
    expect(r).toMatchObject({ principal: "prn_demo", agent_id: "agent_demo", agreement_id: "agr_demo", status: "active", demo: true });
    expect(r.confirmation_text).toBe("prn_demo authorizes agent agent_demo; up to 100 USD per payment; in travel; until 2026-03-09T23:59:59Z.");
    expect(r.mandate_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("gives INTENT_EXPIRED once the time limit has passed, at the evaluation time given", async () => {
    expect((await runDemoCheck(request(100, 1, true, "2026-03-02"), NOW)).verdict).toBe("ALLOW");
    const later = new Date("2026-03-03T00:00:00Z");
    expect(await runDemoCheck(request(100, 1, true, "2026-03-02"), later)).toMatchObject({ verdict: "DENY", reasons: ["INTENT_EXPIRED"] });
  });

  it("compares in minor units: amount <= ceiling is ALLOW, above is DENY (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 }), async (ceil, amt) => {
        const r = await runDemoCheck(request(ceil / 100, amt / 100), NOW);
        expect(r.verdict).toBe(amt <= ceil ? "ALLOW" : "DENY");
      }),
      { numRuns: 60 },
    );
  });
});
