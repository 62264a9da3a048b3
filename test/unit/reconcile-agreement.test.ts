/**
 * The IntentAgreement reconciler's pure status step: what verify enforces for a stored agreement
 * under the delegation it is stored with (`enforcedOf`), and Ready from the readiness policy
 * chain, in its order (a refusal first, then what verify refuses, then waiting, then storing and
 * logging, then the agreement's own effective status).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_NAMES, buildSamples } from "../../src/core/samples/index.js";
import type { Delegation } from "../../src/core/delegation/index.js";
import type { StoredDelegation } from "../../src/store/delegations.js";
import type { AgreementRow } from "../../src/store/status-reads.js";
import { checkDelegationSpec } from "../../src/controller/reconcilers/delegation-checks.js";
import { AGREEMENT_READINESS, agreementReadiness, enforcedOf, type AgreementReadiness } from "../../src/controller/reconcilers/agreement-plan.js";
import type { StoredAncestor } from "../../src/core/delegation/index.js";
import type { Binding } from "../../src/sources/kubernetes/namespace-binding.js";
import type { RecordOwner } from "../../src/store/record-owners.js";
import { checkAgreementSpec } from "../../src/controller/reconcilers/agreement-checks.js";
import {
  gatherAgreementFacts,
  gatherEnforcedFacts,
  planAgreementStore,
  type AgreementReads,
  type AgreementStorePlan,
} from "../../src/controller/reconcilers/agreement-gather.js";

const AT = "2026-11-20T09:00:00Z";
const T = Date.parse("2026-11-23T10:30:00Z");
let grant: Delegation;
let child: Delegation;
let agreementSpec: unknown;

beforeAll(async () => {
  const byName = Object.fromEntries((await buildSamples(AT)).map((s) => [s.manifest.metadata.name, s.manifest.spec]));
  agreementSpec = byName[SAMPLE_NAMES.agreement];
  grant = (await checkDelegationSpec(structuredClone(byName[SAMPLE_NAMES.delegation]), T)).record as Delegation;
  child = (await checkDelegationSpec(structuredClone(byName[SAMPLE_NAMES.chainedDelegation]), T)).record as Delegation;
});

const row = (over: Partial<AgreementRow> = {}): AgreementRow => ({
  agentId: "agent_procurement",
  orgId: "org_acme",
  delegationId: grant.delegation_id,
  revokedAt: null,
  revokedReason: null,
  revokedBy: null,
  pushedRevocation: false,
  ledgerSequence: 0,
  ledgerHead: null,
  ...over,
});
const bound = (over: Partial<StoredDelegation> = {}): StoredDelegation => ({
  delegationId: grant.delegation_id,
  generation: 1,
  orgId: "org_acme",
  agentId: grant.agent.agent_id,
  status: "active",
  revokedAt: null,
  revokedReason: null,
  revokedBy: null,
  parentDelegationId: null,
  record: grant,
  ...over,
});
const base: AgreementReadiness = {
  refusals: [],
  inForce: "",
  enforced: { status: "active" },
  pending: undefined,
  stored: true,
  effective: { status: "active" },
  noLog: false,
  declared: "active",
  agreementId: "agr_1",
  revokedReason: null,
};

describe("enforcedOf", () => {
  it("is the delegation's revocation (DELEGATION_REVOKED) when the delegation it is stored with is revoked", () => {
    const e = enforcedOf(
      row(),
      bound({ revokedAt: new Date(T - 1000), revokedBy: "principal", revokedReason: "lost laptop", status: "revoked" }),
      undefined,
      T,
    );
    expect(e).toMatchObject({ status: "revoked", code: "DELEGATION_REVOKED", why: expect.stringContaining("lost laptop") });
  });

  it("is the agreement's own revocation first (AGREEMENT_REVOKED), saying when deletion made it", () => {
    const e = enforcedOf(row({ revokedAt: new Date(T - 1000), revokedBy: "controller" }), bound(), undefined, T);
    expect(e).toMatchObject({ status: "revoked", code: "AGREEMENT_REVOKED", why: expect.stringContaining("revoked by deletion") });
  });

  it("judges a chained delegation on its stored parent: a parent stored as expired lapses the agreement (CHAIN_LINK_EXPIRED), whatever the child's copy says", () => {
    const under = bound({ delegationId: child.delegation_id, agentId: child.agent.agent_id, record: child, parentDelegationId: grant.delegation_id });
    expect(enforcedOf(row(), under, undefined, T, [{ delegation: grant, orgId: "org_acme", revoked: false }])).toEqual({ status: "active" });
    const lapsed = enforcedOf(row(), under, undefined, T, [{ delegation: { ...grant, status: "expired" }, orgId: "org_acme", revoked: false }]);
    expect(lapsed).toMatchObject({ status: "expired", code: "CHAIN_LINK_EXPIRED", why: expect.stringContaining(grant.delegation_id) });
    const revoked = enforcedOf(row(), under, undefined, T, [{ delegation: grant, orgId: "org_acme", revoked: true }]);
    expect(revoked).toMatchObject({ status: "revoked", code: "CHAIN_LINK_REVOKED" });
  });

  it("is DELEGATION_EXPIRED once the delegation has expired, else active", () => {
    expect(enforcedOf(row(), bound(), undefined, Date.parse(grant.expires_at))).toMatchObject({ status: "expired", code: "DELEGATION_EXPIRED" });
    expect(enforcedOf(row(), bound(), undefined, T)).toEqual({ status: "active" });
  });
});

describe("agreement readiness", () => {
  it("is Ready True when no policy objects", () => {
    expect(agreementReadiness(base)).toEqual({
      type: "Ready",
      status: "True",
      reason: "Reconciled",
      message: "stored as agreement agr_1; effective status active",
    });
  });

  it("says each objection with its reason, the first in order deciding", () => {
    const cases: [Partial<AgreementReadiness>, string][] = [
      [
        { refusals: [{ condition: "Valid", code: "SIGNATURE_INVALID", message: "bad" }], enforced: { status: "revoked", code: "AGREEMENT_REVOKED" } },
        "SIGNATURE_INVALID",
      ],
      [{ enforced: { status: "revoked", code: "DELEGATION_REVOKED", why: "x" }, pending: "waiting" }, "DELEGATION_REVOKED"],
      [{ pending: "the Delegation d is not stored yet", stored: false }, "DelegationNotReady"],
      [{ stored: false, noLog: true }, "NotStored"],
      [{ noLog: true, effective: { status: "revoked" } }, "LogNotConfigured"],
      [{ effective: { status: "revoked" }, revokedReason: "done" }, "AGREEMENT_REVOKED"],
      [{ effective: { status: "expired" } }, "INTENT_EXPIRED"],
    ];
    for (const [over, reason] of cases) expect(agreementReadiness({ ...base, ...over })).toMatchObject({ status: "False", reason });
    expect(AGREEMENT_READINESS).toHaveLength(cases.length);
  });

  it("a declared revocation or expiry is the declared state, not a failure", () => {
    expect(agreementReadiness({ ...base, effective: { status: "revoked" }, declared: "revoked" })).toMatchObject({ status: "True" });
    expect(agreementReadiness({ ...base, effective: { status: "expired" }, declared: "expired" })).toMatchObject({ status: "True" });
  });
});

const NS = "acme";
const ORG = "org_acme";
const AGR = "agr_acme_procurement";
const me: RecordOwner = { namespace: NS, name: SAMPLE_NAMES.agreement, uid: "uid-agreement" };
const other: RecordOwner = { namespace: NS, name: "someone-else", uid: "uid-other" };

/** The store and the cluster as the reconciler reads them: Delegations by name, stored delegations and agreements, owners. */
class FakeStore implements AgreementReads {
  bound: Binding = { ok: true, orgId: ORG };
  /** Delegation resources in the namespace: name -> the delegation_id they declare. */
  readonly refs = new Map<string, string>();
  readonly delegations = new Map<string, StoredDelegation>();
  readonly agreements = new Map<string, AgreementRow>();
  readonly owners = new Map<string, RecordOwner>();
  readonly reads: string[] = [];

  async binding(namespace: string): Promise<Binding> {
    this.reads.push(`binding ${namespace}`);
    return this.bound;
  }
  delegationRef(namespace: string, name: string): string | undefined {
    this.reads.push(`delegationRef ${namespace}/${name}`);
    return this.refs.get(name);
  }
  // Every read is within an organization (an id names a record within one).
  async delegation(org: string | null, id: string): Promise<StoredDelegation | undefined> {
    this.reads.push(`delegation ${id}`);
    const d = this.delegations.get(id);
    return d && d.orgId === org ? structuredClone(d) : undefined;
  }
  async agreement(org: string, id: string): Promise<AgreementRow | undefined> {
    this.reads.push(`agreement ${id}`);
    const a = this.agreements.get(id);
    return a && a.orgId === org ? structuredClone(a) : undefined;
  }
  async owner(_org: string, id: string): Promise<RecordOwner | undefined> {
    this.reads.push(`owner ${id}`);
    return this.owners.get(id);
  }
  async storedChain(org: string | null, ids: readonly string[]): Promise<(StoredAncestor | undefined)[]> {
    this.reads.push(`storedChain ${ids.join(",")}`);
    return ids.map((id) => {
      const d = this.delegations.get(id);
      if (d?.orgId !== org) return undefined;
      return d ? { delegation: structuredClone(d.record), orgId: d.orgId, revoked: d.revokedAt !== null } : undefined;
    });
  }
}

/** A store holding the sample's Delegation resource and its stored grant. */
function storeWithGrant(over: Partial<StoredDelegation> = {}): FakeStore {
  const store = new FakeStore();
  store.refs.set("acme-procurement", grant.delegation_id);
  store.delegations.set(grant.delegation_id, bound(over));
  return store;
}

/** Gather + plan of the sample agreement (or `spec`) declared by the resource `owner`. */
async function planOf(store: FakeStore, opts: { spec?: unknown; declaredId?: string; owner?: RecordOwner } = {}): Promise<AgreementStorePlan> {
  const check = await checkAgreementSpec(structuredClone(opts.spec ?? agreementSpec), T);
  const facts = await gatherAgreementFacts(store, { namespace: NS, check, declaredId: opts.declaredId, owner: opts.owner ?? me });
  return planAgreementStore(facts);
}

describe("planAgreementStore (gathered from a fake store)", () => {
  it("binds a valid agreement to the stored delegation its Delegation names: nothing refused, nothing pending", async () => {
    const store = storeWithGrant();
    const p = await planOf(store);
    expect(p).toMatchObject({ refusals: [], pending: undefined, row: undefined });
    expect(p.delegation?.delegationId).toBe(grant.delegation_id);
    expect(store.reads).toEqual([
      `binding ${NS}`,
      `delegationRef ${NS}/acme-procurement`,
      `delegation ${grant.delegation_id}`,
      `agreement ${AGR}`,
      `owner ${AGR}`,
    ]);
  });

  it("refuses an unbound namespace without reading anything else", async () => {
    const store = storeWithGrant();
    store.bound = { ok: false, message: "namespace acme has no writ.dev/org-id label" };
    const p = await planOf(store);
    expect(p.refusals.map((r) => r.code)).toEqual(["NAMESPACE_NOT_BOUND"]);
    expect(p).toMatchObject({ pending: undefined, delegation: undefined });
    expect(store.reads).toEqual([`binding ${NS}`]);
  });

  it("waits (DelegationNotReady) while the Delegation is missing from the namespace or not stored yet", async () => {
    const missing = await planOf(new FakeStore());
    expect(missing.refusals).toEqual([]);
    expect(missing.pending).toBe(`spec.delegationRef.name: no Delegation acme-procurement in namespace ${NS}`);
    const unstored = new FakeStore();
    unstored.refs.set("acme-procurement", grant.delegation_id);
    const waiting = await planOf(unstored);
    expect(waiting.pending).toBe(`the Delegation acme-procurement (${grant.delegation_id}) is not stored yet`);
    expect(waiting.delegation).toBeUndefined();
    const ready = agreementReadiness({ ...base, enforced: undefined, stored: false, effective: undefined, pending: waiting.pending });
    expect(ready).toMatchObject({ status: "False", reason: "DelegationNotReady" });
  });

  it("never binds to a delegation another organization stores under the id (ids are per organization): it waits for its own", async () => {
    const p = await planOf(storeWithGrant({ orgId: "org_other" }));
    expect(p.refusals).toEqual([]);
    expect(p.pending).toBe(`the Delegation acme-procurement (${grant.delegation_id}) is not stored yet`);
    expect(p.delegation).toBeUndefined();
  });

  it("refuses mandates that do not fit the delegation they name", async () => {
    const store = storeWithGrant({ record: child, agentId: child.agent.agent_id });
    const p = await planOf(store);
    expect(p.refusals.map((r) => r.code)).toEqual(["AGENT_MISMATCH", "INTENT_NOT_BOUND", "AGENT_MISMATCH"]);
    expect(p.delegation?.delegationId).toBe(grant.delegation_id);
  });

  it("refuses an agreement another resource created (RECORD_NOT_OWNED), and never sees one another organization stores under the id", async () => {
    const foreign = storeWithGrant();
    foreign.agreements.set(AGR, row());
    foreign.owners.set(AGR, other);
    const refused = await planOf(foreign);
    expect(refused.refusals.map((r) => r.code)).toEqual(["RECORD_NOT_OWNED"]);
    expect(refused.refusals[0]?.message).toContain(`spec.agreement_id: agreement ${AGR} was created by another resource (${NS}/someone-else)`);
    expect(refused.row).toBeUndefined();

    const elsewhere = storeWithGrant();
    elsewhere.agreements.set(AGR, row({ orgId: "org_other" }));
    elsewhere.owners.set(AGR, me);
    // Another organization's agreement under the id is not this organization's: nothing is refused, nothing of it kept.
    const p = await planOf(elsewhere);
    expect(p.refusals).toEqual([]);
    expect(p.row).toBeUndefined();
  });

  it("keeps the agreement this resource stored before in force, and refuses a changed agreement_id (immutable)", async () => {
    const store = storeWithGrant();
    store.agreements.set("agr_before", row());
    store.owners.set("agr_before", me);
    const p = await planOf(store, { declaredId: "agr_before" });
    expect(p.refusals.map((r) => [r.code, r.message])).toEqual([
      ["SPEC_INVALID", "spec.agreement_id is immutable: this resource declared agr_before; a new agreement is a new resource"],
    ]);
    expect(p.row).toMatchObject({ orgId: ORG, delegationId: grant.delegation_id });
  });

  it("an invalid generation keeps only the agreement this resource stored, in its organization", async () => {
    const invalid = { delegationRef: { name: "acme-procurement" } };
    const store = storeWithGrant();
    store.agreements.set(AGR, row());
    store.owners.set(AGR, me);
    const kept = await planOf(store, { spec: invalid, declaredId: AGR });
    expect(kept.refusals.map((r) => r.code)).toEqual(["SPEC_INVALID"]);
    expect(kept.row).toMatchObject({ orgId: ORG });
    expect(store.reads).toEqual([`binding ${NS}`, `agreement ${AGR}`, `owner ${AGR}`]);

    store.owners.set(AGR, other);
    expect((await planOf(store, { spec: invalid, declaredId: AGR })).row).toBeUndefined();
    store.owners.set(AGR, me);
    store.agreements.set(AGR, row({ orgId: "org_other" }));
    expect((await planOf(store, { spec: invalid, declaredId: AGR })).row).toBeUndefined();
    expect((await planOf(new FakeStore(), { spec: invalid })).row).toBeUndefined();
  });
});

describe("gatherEnforcedFacts (fake store) + enforcedOf", () => {
  it("judges the stored agreement under the delegation it is STORED with: revoked since, verify answers DELEGATION_REVOKED", async () => {
    const store = new FakeStore();
    store.delegations.set(
      "dlg_old",
      bound({ delegationId: "dlg_old", revokedAt: new Date(T - 1000), revokedBy: "principal", revokedReason: "lost laptop", status: "revoked" }),
    );
    const stored = row({ delegationId: "dlg_old" });
    const { bound: under, ancestors } = await gatherEnforcedFacts(store, stored, bound());
    expect(under?.delegationId).toBe("dlg_old");
    expect(ancestors).toEqual([]);
    const enforced = enforcedOf(stored, under, undefined, T, ancestors);
    expect(enforced).toMatchObject({ status: "revoked", code: "DELEGATION_REVOKED" });
    expect(agreementReadiness({ ...base, enforced })).toMatchObject({ status: "False", reason: "DELEGATION_REVOKED" });
  });

  it("reads a chained delegation's stored parents, and nothing without a stored agreement", async () => {
    const store = new FakeStore();
    store.delegations.set(grant.delegation_id, bound({ revokedAt: new Date(T - 1000), status: "revoked" }));
    const under = bound({ delegationId: child.delegation_id, agentId: child.agent.agent_id, record: child, parentDelegationId: grant.delegation_id });
    const stored = row({ delegationId: child.delegation_id });
    const facts = await gatherEnforcedFacts(store, stored, under);
    expect(store.reads).toEqual([`storedChain ${grant.delegation_id}`]);
    expect(enforcedOf(stored, facts.bound, undefined, T, facts.ancestors)).toMatchObject({ status: "revoked", code: "CHAIN_LINK_REVOKED" });
    store.reads.length = 0;
    expect(await gatherEnforcedFacts(store, undefined, under)).toEqual({ bound: under, ancestors: [] });
    expect(store.reads).toEqual([]);
  });
});
