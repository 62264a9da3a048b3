import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hashOf } from "../../../src/core/canonical/index.js";
import { readRequest, type VerifyRequest } from "../../../src/verify/pipeline/request.js";

const ACTION_KEYS = ["action_id", "action_type", "amount", "currency", "proposed_at", "merchant", "item", "category", "intent_id"] as const;
const TOP_KEYS = ["agent_id", "agreement_id", "risk_score", "principal_present", "ledger_sequence"] as const;

/** The reference: the known members picked in any order, hashed through the JCS library. */
function referenceHash(req: VerifyRequest): string {
  const a = req.action as unknown as Record<string, unknown>;
  const r = req as unknown as Record<string, unknown>;
  const action = Object.fromEntries(ACTION_KEYS.filter((k) => a[k] !== undefined).map((k) => [k, a[k]]));
  return hashOf({ ...Object.fromEntries(TOP_KEYS.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])), action });
}

// Any text, including escapes, non-ASCII and lone surrogates, where JCS and JSON.stringify must agree.
const text = fc.string({ unit: "binary", maxLength: 12 });
const amount = fc.oneof(fc.double({ min: 0, max: 1e12, noNaN: true }), fc.integer({ min: 0, max: 1e9 }), fc.constantFrom(0, 1e-7, 123.45, 1e21 / 1e10));
const request: fc.Arbitrary<VerifyRequest> = fc.record(
  {
    agent_id: text,
    action: fc.record(
      {
        action_id: text,
        action_type: text,
        amount,
        currency: fc.constantFrom("USD", "EUR", "JPY"),
        proposed_at: fc.constant("2026-11-21T10:00:00Z"),
        merchant: text,
        item: text,
        category: text,
        intent_id: text,
      },
      { requiredKeys: ["action_id", "action_type", "amount", "currency", "proposed_at"] },
    ),
    agreement_id: text,
    risk_score: fc.double({ min: 0, max: 100, noNaN: true }),
    principal_present: fc.boolean(),
    ledger_sequence: fc.integer({ min: 0, max: 2147483647 }),
  },
  { requiredKeys: ["agent_id", "action"] },
);

describe("verify request hash", () => {
  it("is the sha256 of the RFC 8785 form of the known members, whatever their order and content", () => {
    fc.assert(
      fc.property(request, (req) => {
        expect(readRequest(req).hash).toBe(referenceHash(req));
      }),
      { numRuns: 2000 },
    );
  });

  it("ignores unknown members and the order members came in", () => {
    const req: VerifyRequest = {
      agent_id: "agt_1",
      action: { action_id: "a-1", action_type: "purchase", amount: 12.5, currency: "USD", proposed_at: "2026-11-21T10:00:00Z", merchant: "m" },
    };
    const reordered = JSON.parse(
      '{"action":{"merchant":"m","proposed_at":"2026-11-21T10:00:00Z","currency":"USD","amount":12.5,"action_type":"purchase","action_id":"a-1","extra":1},"agent_id":"agt_1","note":"x"}',
    ) as VerifyRequest;
    expect(readRequest(reordered).hash).toBe(readRequest(req).hash);
    expect(readRequest(req).hash).toBe(referenceHash(req));
  });

  it("changes when any known member changes", () => {
    const req: VerifyRequest = {
      agent_id: "agt_1",
      action: { action_id: "a-1", action_type: "purchase", amount: 12.5, currency: "USD", proposed_at: "2026-11-21T10:00:00Z" },
    };
    const base = readRequest(req).hash;
    const variants: VerifyRequest[] = [
      { ...req, agent_id: "agt_2" },
      { ...req, agreement_id: "ag" },
      { ...req, risk_score: 1 },
      { ...req, principal_present: false },
      { ...req, ledger_sequence: 0 },
      ...ACTION_KEYS.map((k) => ({ ...req, action: { ...req.action, [k]: k === "amount" ? 12.51 : "other" } })),
    ];
    for (const v of variants) expect(readRequest(v).hash, JSON.stringify(v)).not.toBe(base);
  });

  it("gives the action the engine evaluates: the known members and the agent", () => {
    const { action } = readRequest({
      agent_id: "agt_1",
      action: { action_id: "a-1", action_type: "purchase", amount: 3, currency: "EUR", proposed_at: "2026-11-21T10:00:00Z", extra: true } as never,
    });
    expect(action).toEqual({ action_id: "a-1", action_type: "purchase", amount: 3, currency: "EUR", proposed_at: "2026-11-21T10:00:00Z", agent_id: "agt_1" });
  });
});
