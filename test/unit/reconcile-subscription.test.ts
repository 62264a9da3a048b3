/** The Subscription reconciler's pure status step: Ready only with a stored subscription and no refusal; the first refusal's code otherwise. */
import { describe, expect, it } from "vitest";
import type { Binding } from "../../src/sources/kubernetes/namespace-binding.js";
import {
  gatherSubscriptionFacts,
  planSubscriptionStatus,
  planSubscriptionStore,
  type SubscriptionReads,
  type SubscriptionStatusFacts,
} from "../../src/controller/reconcilers/subscription.js";

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

/** The namespace binding and the registered agents, as the reconciler reads them. */
class FakeStore implements SubscriptionReads {
  bound: Binding = { ok: true, orgId: "org_acme" };
  readonly agents = new Set(["agent_procurement"]);
  readonly reads: string[] = [];
  async binding(namespace: string): Promise<Binding> {
    this.reads.push(`binding ${namespace}`);
    return this.bound;
  }
  async agentRegistered(agentId: string): Promise<boolean> {
    this.reads.push(`agent ${agentId}`);
    return this.agents.has(agentId);
  }
}

const declared = { agentId: "agent_procurement", webhookUrl: "https://hooks.acme.example/writ" };
const planOf = async (store: FakeStore, spec: unknown) => planSubscriptionStore(await gatherSubscriptionFacts(store, "acme", spec));

describe("planSubscriptionStore (gathered from a fake store)", () => {
  it("creates the subscription for the namespace's organization when nothing is refused", async () => {
    const store = new FakeStore();
    expect(await planOf(store, declared)).toEqual({
      refusals: [],
      create: { org_id: "org_acme", agent_id: "agent_procurement", webhook_url: "https://hooks.acme.example/writ" },
    });
    expect(store.reads).toEqual(["binding acme", "agent agent_procurement"]);
  });

  it("refuses an unregistered agent (AGENT_NOT_ACTIVE) and an unbound namespace, creating nothing", async () => {
    const store = new FakeStore();
    const unknown = await planOf(store, { ...declared, agentId: "agent_ghost" });
    expect(unknown).toEqual({
      refusals: [{ condition: "Valid", code: "AGENT_NOT_ACTIVE", message: "spec.agentId: agent agent_ghost is not registered" }],
    });
    store.bound = { ok: false, message: "namespace acme has no writ.dev/org-id label" };
    const unbound = await planOf(store, declared);
    expect(unbound).toEqual({ refusals: [{ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: "namespace acme has no writ.dev/org-id label" }] });
  });

  it("refuses a spec that does not check (SPEC_INVALID) without asking about an agent", async () => {
    const store = new FakeStore();
    const p = await planOf(store, { webhookUrl: "http://hooks.acme.example/writ" });
    expect(p.create).toBeUndefined();
    expect(p.refusals.map((r) => r.code)).toEqual(["SPEC_INVALID", "SPEC_INVALID"]);
    expect(store.reads).toEqual(["binding acme"]);
  });
});
