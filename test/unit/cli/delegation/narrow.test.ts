/**
 * `writ delegation narrow`: a valid narrowing becomes a Delegation manifest whose chain is the
 * parent's plus a link for the parent (and whose chain the core finds intact and narrowing);
 * every widening is refused with exit 1, naming the field.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { delegationGroup } from "../../../../src/cli/delegation/index.js";
import { delegationFromSpec } from "../../../../src/core/crd/index.js";
import { prepareChain, type Delegation } from "../../../../src/core/delegation/index.js";
import { generateSigner } from "../../../../src/core/jose/index.js";
import { validate } from "../../../../src/core/schemas/index.js";
import { runVerb } from "../capture.js";
import { tempDir, writeDoc } from "../fixtures.js";

const dir = tempDir("writ-narrow-");
const principalKey = generateSigner().publicJwk;

const parent: Delegation = {
  delegation_id: "del_root",
  principal: { type: "business", id: "org_acme", public_key: principalKey },
  agent: { agent_id: "agent_procurement" },
  granted_at: "2026-03-01T09:00:00Z",
  expires_at: "2026-03-08T09:00:00Z",
  purpose: "procurement",
  scope: {
    currency: "EUR",
    maximum_amount: 500,
    cumulative_maximum: 2000,
    action_types: ["purchase", "refund"],
    categories: ["office", "travel"],
    merchants: ["db-bahn", "adlon", "staples"],
  },
  conditions: [
    { type: "business_hours_only", timezone: "Europe/Berlin" },
    { type: "max_risk_score", value: 70 },
  ],
  revocable: true,
  delegation_chain: [],
  status: "active",
};

const parentManifest = writeDoc(dir, "parent.yaml", {
  apiVersion: "writ.dev/v1alpha1",
  kind: "Delegation",
  metadata: { name: "root", namespace: "acme" },
  spec: { ...Object.fromEntries(Object.entries(parent).filter(([k]) => k !== "status")), state: "active" },
});

const base = [
  "narrow",
  "--parent",
  parentManifest,
  "--at",
  "2026-03-01T10:00:00Z",
  "--set",
  "delegation_id=del_travel",
  "--set",
  "agent.agent_id=agent_travel",
];

function childOf(out: string): { manifest: Record<string, unknown>; record: Delegation } {
  const manifest = parse(out) as Record<string, unknown>;
  const v = validate<Delegation>("delegation", delegationFromSpec(manifest.spec));
  if (!v.ok) throw new Error(v.errors.join("\n"));
  return { manifest, record: v.value };
}

describe("writ delegation narrow", () => {
  it("derives a narrower child: chain = parent's chain + a link for the parent", async () => {
    const r = await runVerb(delegationGroup, [
      ...base,
      "--set",
      "scope.maximum_amount=300",
      "--set",
      "scope.categories=travel",
      "--set",
      "expires_at=2026-03-05T09:00:00Z",
    ]);
    expect(r.err).toContain("nothing widens");
    expect(r.code).toBe(0);
    const { manifest, record } = childOf(r.out);
    expect(manifest).toMatchObject({ kind: "Delegation", metadata: { name: "del-travel", namespace: "acme" } });
    expect(record).toMatchObject({
      delegation_id: "del_travel",
      principal: parent.principal,
      agent: { agent_id: "agent_travel" },
      granted_at: "2026-03-01T10:00:00Z",
      expires_at: "2026-03-05T09:00:00Z",
      scope: { ...parent.scope, maximum_amount: 300, categories: ["travel"] },
      conditions: parent.conditions,
      status: "active",
    });
    expect(record.delegation_chain).toEqual([
      {
        delegation_id: "del_root",
        delegator: { type: "business", id: "org_acme" },
        delegate: { agent_id: "agent_procurement" },
        delegated_at: parent.granted_at,
        expires_at: parent.expires_at,
        scope: parent.scope,
        conditions: parent.conditions,
      },
    ]);
    expect(prepareChain(record)).toEqual({ chain: expect.any(Array) });
  });

  it("a child of a chained delegation gets a two-link chain delegated by the parent's agent", async () => {
    const first = await runVerb(delegationGroup, [...base, "--set", "scope.categories=travel"]);
    const firstPath = writeDoc(dir, "travel.yaml", parse(first.out));
    const r = await runVerb(delegationGroup, [
      "narrow",
      "--parent",
      firstPath,
      "--at",
      "2026-03-01T11:00:00Z",
      "--set",
      "delegation_id=del_rail",
      "--set",
      "agent.agent_id=agent_rail",
      "--set",
      "scope.merchants=db-bahn",
    ]);
    expect(r.code).toBe(0);
    const { record } = childOf(r.out);
    expect(record.delegation_chain.map((l) => [l.delegation_id, l.delegator, l.delegate.agent_id])).toEqual([
      ["del_root", { type: "business", id: "org_acme" }, "agent_procurement"],
      ["del_travel", { type: "agent", id: "agent_procurement" }, "agent_travel"],
    ]);
    expect(prepareChain(record).chainBroken).toBeUndefined();
    expect(prepareChain(record).chainWidened).toBeUndefined();
  });

  it.each([
    [["--set", "scope.maximum_amount=600"], "scope.maximum_amount: 600.00 > 500.00 EUR"],
    [["--set", "scope.cumulative_maximum=2000.01"], "scope.cumulative_maximum"],
    [["--set", "scope.merchants=db-bahn,amazon"], 'scope.merchants: "amazon" not in the parent\'s merchants'],
    [["--set", "scope.action_types=purchase,transfer"], "scope.action_types"],
    [["--set", "scope.currency=USD"], "scope.currency: USD differs from the parent's EUR"],
    [["--set", "expires_at=2026-03-09T09:00:00Z"], "expires_at: 2026-03-09T09:00:00Z is later than the parent's 2026-03-08T09:00:00Z"],
    [["--set", "granted_at=2026-03-01T08:00:00Z"], "granted_at: 2026-03-01T08:00:00Z is earlier than the parent's"],
    [["--set", "revocable=false"], "revocable: false while the parent is revocable"],
  ])("refuses %j naming the field", async (extra, message) => {
    const r = await runVerb(delegationGroup, [...base, ...extra]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain("refused: del_travel would widen or break its parent del_root");
    expect(r.err).toContain(message);
  });

  it("refuses a child file that drops or widens a condition, listing every widening", async () => {
    const child = writeDoc(dir, "child.yaml", {
      delegation_id: "del_c",
      agent: { agent_id: "agent_c" },
      scope: { maximum_amount: 900 },
      conditions: [{ type: "max_risk_score", value: 90 }],
    });
    const r = await runVerb(delegationGroup, ["narrow", "--parent", parentManifest, "--child", child, "--at", "2026-03-01T10:00:00Z"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("scope.maximum_amount: 900.00 > 500.00 EUR");
    expect(r.err).toContain("conditions: drops business_hours_only Europe/Berlin");
    expect(r.err).toContain("conditions: widens max_risk_score 70");
  });

  it("accepts a child file that narrows, including stricter conditions", async () => {
    const child = writeDoc(dir, "child-ok.json", {
      delegation_id: "del_ok",
      agent: { agent_id: "agent_ok", public_key: generateSigner().publicJwk },
      purpose: "rail only",
      scope: { merchants: ["db-bahn"] },
      conditions: [{ type: "business_hours_only", timezone: "Europe/Berlin" }, { type: "max_risk_score", value: 40 }, { type: "principal_present" }],
    });
    const r = await runVerb(delegationGroup, [
      "narrow",
      "--parent",
      parentManifest,
      "--child",
      child,
      "--name",
      "rail",
      "--at",
      "2026-03-01T10:00:00Z",
      "--output",
      "json",
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { metadata: unknown; spec: { purpose: string; conditions: unknown[] } };
    expect(out.metadata).toEqual({ name: "rail", namespace: "acme" });
    expect(out.spec.purpose).toBe("rail only");
    expect(out.spec.conditions).toHaveLength(3);
  });

  it("refuses a delegation to the parent's own agent, a reused id, and a child that sets the principal", async () => {
    let r = await runVerb(delegationGroup, [
      "narrow",
      "--parent",
      parentManifest,
      "--at",
      "2026-03-01T10:00:00Z",
      "--set",
      "delegation_id=del_self",
      "--set",
      "agent.agent_id=agent_procurement",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("delegation_chain: this delegation (del_self) delegates from agent agent_procurement to itself");
    r = await runVerb(delegationGroup, ["narrow", "--parent", parentManifest, "--set", "delegation_id=del_root", "--set", "agent.agent_id=x"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("its own delegation_id");
    const child = writeDoc(dir, "child-principal.yaml", { delegation_id: "del_p", agent: { agent_id: "a" }, principal: { type: "human", id: "mallory" } });
    r = await runVerb(delegationGroup, ["narrow", "--parent", parentManifest, "--child", child]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("principal: a sub-delegation keeps its parent's root principal");
  });

  it("refuses to delegate from a parent that is no longer active or has expired", async () => {
    const suspended = writeDoc(dir, "suspended.yaml", { ...parent, status: "suspended" });
    let r = await runVerb(delegationGroup, [
      "narrow",
      "--parent",
      suspended,
      "--at",
      "2026-03-01T10:00:00Z",
      "--set",
      "delegation_id=del_x",
      "--set",
      "agent.agent_id=x",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("status: the parent is suspended");
    r = await runVerb(delegationGroup, [
      "narrow",
      "--parent",
      parentManifest,
      "--at",
      "2026-04-01T10:00:00Z",
      "--set",
      "delegation_id=del_x",
      "--set",
      "agent.agent_id=x",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("nothing is left to delegate");
  });

  it("needs a child (exit 2) and names unknown --set fields", async () => {
    let r = await runVerb(delegationGroup, ["narrow", "--parent", parentManifest]);
    expect(r.code).toBe(2);
    r = await runVerb(delegationGroup, ["narrow", "--parent", parentManifest, "--set", "scope.maximum=1"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--set cannot change "scope.maximum"');
    r = await runVerb(delegationGroup, ["narrow", "--parent", parentManifest, "--set", "delegation_id=x"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("the child needs an agent");
  });
});
