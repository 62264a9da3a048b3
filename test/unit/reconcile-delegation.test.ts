/**
 * The Delegation reconciler's gather and plan steps against a fake store (no Postgres, no API
 * server): what a generation is refused for, what is stored, and what Ready says. Ready of a
 * child is judged on its STORED parents (their revocation, suspension, expiry and narrowing),
 * the way verify judges it, never on the copy of the parent the child's spec carries.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_NAMES, buildSamples } from "../../src/core/samples/index.js";
import type { Delegation, StoredAncestor } from "../../src/core/delegation/index.js";
import type { Binding } from "../../src/sources/kubernetes/namespace-binding.js";
import type { StoredDelegation } from "../../src/store/delegations.js";
import type { RecordOwner } from "../../src/store/record-owners.js";
import { checkDelegationSpec } from "../../src/controller/reconcilers/delegation-checks.js";
import { gatherStatusFacts, gatherStoreFacts, type DelegationReads } from "../../src/controller/reconcilers/delegation-gather.js";
import { READINESS, planStatus, planStore, readinessOf, type StorePlan } from "../../src/controller/reconcilers/delegation-plan.js";
import type { DesiredCondition } from "../../src/controller/conditions.js";

const AT = "2026-11-20T09:00:00Z";
const T = Date.parse("2026-11-23T10:30:00Z");
const ORG = "org_acme";
const NS = "acme";
let specs: Record<string, Record<string, unknown>>;
const spec = (name: string): Record<string, unknown> => structuredClone(specs[name] ?? {});
const ownerOf = (name: string): RecordOwner => ({ namespace: NS, name, uid: `Delegation/${NS}/${name}` });

beforeAll(async () => {
  specs = Object.fromEntries((await buildSamples(AT)).map((s) => [s.manifest.metadata.name, s.manifest.spec as Record<string, unknown>]));
});

/** The store as the reconciler reads it: records, owners, revocations, the namespace binding and the agents' organizations. */
class FakeStore implements DelegationReads {
  readonly delegations = new Map<string, StoredDelegation>();
  readonly owners = new Map<string, RecordOwner>();
  readonly revocations = new Set<string>();
  bound: Binding = { ok: true, orgId: ORG };
  readonly agents = new Map<string, string>([
    ["agent_procurement", ORG],
    ["agent_travel", ORG],
  ]);
  readonly reads: string[] = [];

  /** Stores `record` as the resource `name` would (its own owner), optionally revoked. */
  put(record: Delegation, name: string, opts: { revoked?: boolean } = {}): void {
    const revoked = opts.revoked === true;
    this.delegations.set(record.delegation_id, {
      delegationId: record.delegation_id,
      generation: 1,
      orgId: ORG,
      agentId: record.agent.agent_id,
      status: revoked ? "revoked" : record.status,
      revokedAt: revoked ? new Date(T - 3600_000) : null,
      revokedReason: revoked ? "compromised key" : null,
      revokedBy: revoked ? "principal" : null,
      parentDelegationId: record.delegation_chain.at(-1)?.delegation_id ?? null,
      record: revoked ? { ...record, status: "revoked" } : record,
    });
    if (revoked) this.revocations.add(record.delegation_id);
    this.owners.set(`delegation:${record.delegation_id}`, ownerOf(name));
  }

  async binding(namespace: string): Promise<Binding> {
    this.reads.push(`binding ${namespace}`);
    return this.bound;
  }
  async agentOrg(agentId: string): Promise<string | undefined> {
    this.reads.push(`agentOrg ${agentId}`);
    return this.agents.get(agentId);
  }
  /** The stored delegation `id` of organization `org` (an id names a record within one organization). */
  private of(org: string | null, id: string): StoredDelegation | undefined {
    const d = this.delegations.get(id);
    return d && d.orgId === org ? d : undefined;
  }
  async delegation(org: string, id: string): Promise<StoredDelegation | undefined> {
    this.reads.push(`delegation ${id}`);
    return structuredClone(this.of(org, id));
  }
  async owner(_org: string, kind: "delegation" | "agreement", id: string): Promise<RecordOwner | undefined> {
    this.reads.push(`owner ${kind} ${id}`);
    return this.owners.get(`${kind}:${id}`);
  }
  async storedChain(org: string | null, ids: readonly string[]): Promise<(StoredAncestor | undefined)[]> {
    this.reads.push(`storedChain ${ids.join(",")}`);
    return ids.map((id) => {
      const d = this.of(org, id);
      return d ? { delegation: structuredClone(d.record), orgId: d.orgId, revoked: d.revokedAt !== null } : undefined;
    });
  }
  async revokedIds(_org: string | null, ids: readonly string[]): Promise<Set<string>> {
    this.reads.push(`revokedIds ${ids.join(",")}`);
    return new Set(ids.filter((id) => this.revocations.has(id)));
  }
}

/** One reconcile of the resource `name` declaring `s`, with the store write simulated as the reconciler's apply does it. */
async function reconcile(
  store: FakeStore,
  name: string,
  s: Record<string, unknown>,
  declaredId?: string,
): Promise<{ plan: StorePlan; ready: DesiredCondition; fields: Record<string, unknown> }> {
  const check = await checkDelegationSpec(s, T);
  const facts = await gatherStoreFacts(store, { namespace: NS, now: T, check, declaredId, owner: ownerOf(name) });
  const plan = planStore(facts);
  let stored = plan.inForce;
  if (plan.store && plan.record) {
    store.put(plan.record, name);
    stored = store.delegations.get(plan.record.delegation_id);
  }
  const { revoked, ancestors } = await gatherStatusFacts(store, stored, facts);
  const status = planStatus({
    namespace: NS,
    generation: 1,
    now: T,
    binding: facts.binding,
    record: plan.record,
    refusals: plan.refusals,
    stored,
    revoked,
    ancestors,
  });
  const ready = status.conditions.find((c) => c.type === "Ready") as DesiredCondition;
  return { plan, ready, fields: status.fields };
}

/** The parent and child samples as records. */
async function records(): Promise<{ parent: Delegation; child: Delegation }> {
  const parent = (await checkDelegationSpec(spec(SAMPLE_NAMES.delegation), T)).record as Delegation;
  const child = (await checkDelegationSpec(spec(SAMPLE_NAMES.chainedDelegation), T)).record as Delegation;
  return { parent, child };
}

describe("planStore (gathered from a fake store)", () => {
  it("stores a valid, bound grant and says Ready", async () => {
    const store = new FakeStore();
    const r = await reconcile(store, SAMPLE_NAMES.delegation, spec(SAMPLE_NAMES.delegation));
    expect(r.plan).toMatchObject({ refusals: [], store: true, awaitingParent: false });
    expect(r.ready).toMatchObject({ status: "True", reason: "Reconciled" });
    expect(r.fields).toMatchObject({ phase: "Active", effectiveStatus: "active", chainDepth: 0 });
  });

  it("refuses an unbound namespace without reading anything else", async () => {
    const store = new FakeStore();
    store.bound = { ok: false, message: "namespace acme has no writ.dev/org-id label" };
    const r = await reconcile(store, SAMPLE_NAMES.delegation, spec(SAMPLE_NAMES.delegation));
    expect(r.plan.store).toBe(false);
    expect(r.ready).toMatchObject({ status: "False", reason: "NAMESPACE_NOT_BOUND" });
    expect(store.reads).toEqual([`binding ${NS}`]);
  });

  it("refuses an agent registered to another organization", async () => {
    const store = new FakeStore();
    store.agents.set("agent_procurement", "org_other");
    const r = await reconcile(store, SAMPLE_NAMES.delegation, spec(SAMPLE_NAMES.delegation));
    expect(r.plan.refusals).toEqual([
      expect.objectContaining({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: expect.stringContaining("not registered to org_acme") }),
    ]);
    expect(r.plan.store).toBe(false);
  });

  it("refuses a record another resource created (RECORD_NOT_OWNED) and enforces nothing through this one", async () => {
    const store = new FakeStore();
    const { parent } = await records();
    store.put(parent, "someone-else");
    const r = await reconcile(store, "copycat", spec(SAMPLE_NAMES.delegation));
    expect(r.plan.refusals.map((x) => x.code)).toEqual(["RECORD_NOT_OWNED"]);
    expect(r.plan.inForce).toBeUndefined();
    expect(r.ready).toMatchObject({ status: "False", reason: "RECORD_NOT_OWNED", message: expect.stringContaining("nothing is stored for this resource") });
  });

  it("refuses a silent extension and says the record stored before stays in force", async () => {
    const store = new FakeStore();
    const { parent } = await records();
    store.put(parent, SAMPLE_NAMES.delegation);
    const s = spec(SAMPLE_NAMES.delegation);
    s.expires_at = new Date(Date.parse(parent.expires_at) + 86_400_000).toISOString().replace(".000Z", "Z");
    const r = await reconcile(store, SAMPLE_NAMES.delegation, s, parent.delegation_id);
    expect(r.plan.refusals).toEqual([expect.objectContaining({ code: "SPEC_INVALID", message: expect.stringContaining("silent extension") })]);
    expect(r.ready).toMatchObject({
      status: "False",
      reason: "SPEC_INVALID",
      message: expect.stringContaining("verify still answers with the record stored before"),
    });
  });

  it("refuses a child whose parent is not stored yet (CHAIN_BROKEN) and waits for it", async () => {
    const store = new FakeStore();
    const r = await reconcile(store, SAMPLE_NAMES.chainedDelegation, spec(SAMPLE_NAMES.chainedDelegation));
    expect(r.plan.refusals.map((x) => x.code)).toEqual(["CHAIN_BROKEN"]);
    expect(r.plan.awaitingParent).toBe(true);
    expect(r.fields).toMatchObject({ phase: "Invalid" });
  });
});

describe("Ready of a child is judged on its stored parents", () => {
  /** The parent and the child stored, as after both were applied. */
  async function stored(): Promise<{ store: FakeStore; parent: Delegation; child: Delegation }> {
    const store = new FakeStore();
    const { parent, child } = await records();
    store.put(parent, SAMPLE_NAMES.delegation);
    const r = await reconcile(store, SAMPLE_NAMES.chainedDelegation, spec(SAMPLE_NAMES.chainedDelegation));
    expect(r.ready).toMatchObject({ status: "True", reason: "Reconciled" });
    expect(r.fields).toMatchObject({ chainDepth: 1, phase: "Active", expiresAt: new Date(Date.parse(child.expires_at)).toISOString() });
    return { store, parent, child };
  }

  /** The status step alone: the child's record as stored, its chain read from the store. */
  async function storedStatus(store: FakeStore, child: Delegation): Promise<ReturnType<typeof planStatus>> {
    const inForce = store.delegations.get(child.delegation_id) as StoredDelegation;
    const { revoked, ancestors } = await gatherStatusFacts(store, inForce);
    return planStatus({
      namespace: NS,
      generation: 1,
      now: T,
      binding: { ok: true, orgId: ORG },
      record: child,
      refusals: [],
      stored: inForce,
      revoked,
      ancestors,
    });
  }

  /** Ready of the stored child as the status step judges it now. */
  async function readyNow(store: FakeStore, child: Delegation): Promise<{ ready: DesiredCondition; fields: Record<string, unknown> }> {
    const r = await reconcile(store, SAMPLE_NAMES.chainedDelegation, spec(SAMPLE_NAMES.chainedDelegation), child.delegation_id);
    return { ready: r.ready, fields: r.fields };
  }

  it("a stored parent revoked (the child's own row not yet) is CHAIN_LINK_REVOKED, phase Revoked", async () => {
    const { store, parent, child } = await stored();
    // Only the status step is judged: the child's record as stored, its chain read from the store.
    store.put(parent, SAMPLE_NAMES.delegation, { revoked: true });
    const status = await storedStatus(store, child);
    expect(status.conditions.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "CHAIN_LINK_REVOKED",
      message: expect.stringContaining(parent.delegation_id),
    });
    expect(status.fields).toMatchObject({ phase: "Revoked", effectiveStatus: "revoked" });
  });

  it("a stored parent suspended makes the child not Ready (DELEGATION_SUSPENDED naming the link)", async () => {
    const { store, parent, child } = await stored();
    store.put({ ...parent, status: "suspended" }, SAMPLE_NAMES.delegation);
    const { ready } = await readyNow(store, child);
    expect(ready).toMatchObject({
      status: "False",
      reason: "DELEGATION_SUSPENDED",
      message: expect.stringContaining(`link 1 (${parent.delegation_id}) above this grant is suspended`),
    });
  });

  it("a stored parent narrowed below the child is CHAIN_SCOPE_WIDENED, whatever the child's copy says", async () => {
    const { store, parent, child } = await stored();
    store.put({ ...parent, scope: { ...parent.scope, maximum_amount: 200 } }, SAMPLE_NAMES.delegation);
    // The status of the record stored before (the child's spec, unchanged, is now refused as a stale copy).
    const status = await storedStatus(store, child);
    expect(status.conditions.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "CHAIN_SCOPE_WIDENED",
      message: expect.stringContaining("maximum_amount"),
    });
  });

  it("a stored parent expired (its record says so) is CHAIN_LINK_EXPIRED, with the effective expiry", async () => {
    const { store, parent, child } = await stored();
    store.put({ ...parent, status: "expired" }, SAMPLE_NAMES.delegation);
    const status = await storedStatus(store, child);
    expect(status.conditions.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "CHAIN_LINK_EXPIRED" });
    expect(status.fields).toMatchObject({ phase: "Expired" });
  });

  it("reads the stored parents once per reconcile: the status uses the chain the gather read", async () => {
    const { store, parent, child } = await stored();
    store.reads.length = 0;
    await readyNow(store, child);
    expect(store.reads.filter((r) => r.startsWith("storedChain"))).toEqual([`storedChain ${parent.delegation_id}`]);
  });

  it("reads the stored parents for the status (not the copy in the child's record)", async () => {
    const { store, parent, child } = await stored();
    store.reads.length = 0;
    await gatherStatusFacts(store, store.delegations.get(child.delegation_id));
    expect(store.reads).toEqual([`storedChain ${parent.delegation_id}`]);
  });
});

describe("the readiness policy chain", () => {
  it("the first policy that objects decides; none objecting is Ready True", async () => {
    const store = new FakeStore();
    const { parent } = await records();
    store.put(parent, SAMPLE_NAMES.delegation);
    const stored = store.delegations.get(parent.delegation_id) as StoredDelegation;
    const r = {
      record: parent,
      stored,
      view: { effective: "active" as const, expiresAtMs: Date.parse(parent.expires_at), chainFindings: [] },
      revoked: new Set<string>(),
      ancestors: [],
    };
    expect(readinessOf(r)).toMatchObject({ status: "True", reason: "Reconciled" });
    const first = () => ({ type: "Ready", status: "False" as const, reason: "NotStored" as const, message: "first" });
    const second = () => ({ type: "Ready", status: "False" as const, reason: "NotStored" as const, message: "second" });
    expect(readinessOf(r, [() => undefined, first, second])).toMatchObject({ message: "first" });
    expect(READINESS.length).toBeGreaterThanOrEqual(4);
  });
});
