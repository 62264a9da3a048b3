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

const AT = "2026-11-20T09:00:00Z";
const T = Date.parse("2026-11-23T10:30:00Z");
let grant: Delegation;
let child: Delegation;

beforeAll(async () => {
  const byName = Object.fromEntries((await buildSamples(AT)).map((s) => [s.manifest.metadata.name, s.manifest.spec]));
  grant = (await checkDelegationSpec(structuredClone(byName[SAMPLE_NAMES.delegation]), T)).record as Delegation;
  child = (await checkDelegationSpec(structuredClone(byName[SAMPLE_NAMES.chainedDelegation]), T)).record as Delegation;
});

const row = (over: Partial<AgreementRow> = {}): AgreementRow => ({
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
