/** The Subscription reconciler's pure status step: Ready only with a stored subscription and no refusal; the first refusal's code otherwise. */
import { describe, expect, it } from "vitest";
import { planSubscriptionStatus, type SubscriptionStatusFacts } from "../../src/controller/reconcilers/subscription.js";

const base: SubscriptionStatusFacts = {
  namespace: "acme",
  generation: 3,
  binding: { ok: true, orgId: "org_acme" },
  refusals: [],
  spec: { agentId: "agent_procurement", webhookUrl: "https://hooks.acme.example/writ" },
  subscriptionId: "sub_1",
};
const ready = (f: SubscriptionStatusFacts) => planSubscriptionStatus(f).conditions.find((c) => c.type === "Ready");

describe("planSubscriptionStatus", () => {
  it("is Ready with the stored subscription", () => {
    const s = planSubscriptionStatus(base);
    expect(s.fields).toEqual({ phase: "Ready", subscriptionId: "sub_1" });
    expect(s.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["Valid", "True", "Validated"],
      ["Bound", "True", "Bound"],
      ["Stored", "True", "Stored"],
      ["Ready", "True", "Reconciled"],
    ]);
    expect(ready(base)?.message).toBe("alerts about agent_procurement go to https://hooks.acme.example/writ");
  });

  it("says the first refusal (Invalid), and Pending while nothing is stored", () => {
    const refused = {
      ...base,
      subscriptionId: undefined,
      refusals: [{ condition: "Valid", code: "AGENT_NOT_ACTIVE" as const, message: "spec.agentId: agent x is not registered" }],
    };
    expect(planSubscriptionStatus(refused).fields).toMatchObject({ phase: "Invalid" });
    expect(ready(refused)).toMatchObject({ status: "False", reason: "AGENT_NOT_ACTIVE", message: "spec.agentId: agent x is not registered" });
    const waiting = { ...base, subscriptionId: undefined };
    expect(planSubscriptionStatus(waiting).fields).toMatchObject({ phase: "Pending" });
    expect(ready(waiting)).toMatchObject({ status: "False", reason: "NotStored" });
  });
});
