/**
 * The Delegation reconciler's decisions, pure (no I/O): what ./delegation-gather.ts read goes
 * in, what ./delegation.ts applies comes out.
 *
 * `planStore`: the refusals of a declared grant (spec, binding, record id, ownership, silent
 * extension, the chain judged against its stored links), the record verify enforces meanwhile,
 * and whether to store. `planStatus`: the conditions and status fields of what is stored, Ready
 * decided by `READINESS`, an ordered chain of policies (the first that objects decides Ready
 * False; none objecting is Ready True). Ready is judged on the record AS STORED and its chain as
 * the STORED parents give it (core `withStoredChain`), the way verify judges it, never on the
 * copies a child's spec carries.
 */
import { silentExtension, type Delegation, type StoredAncestor } from "../../core/delegation/index.js";
import type { Binding } from "../../sources/kubernetes/index.js";
import type { StoredDelegation, RecordOwner } from "../../store/index.js";
import type { DesiredCondition } from "../conditions.js";
import { summary, type Refusal } from "../spec-errors.js";
import { conditionOf, phaseOf } from "./context.js";
import { delegationView, storedChainRefusals, type DelegationCheck, type DelegationView } from "./delegation-checks.js";
import { inForce, revokedMessage, storedCondition, suspendedNote } from "./delegation-status.js";
import { notOwnedRefusal } from "./ownership.js";

/** What `gatherStoreFacts` read for one generation of a Delegation (grant form). */
export interface StoreFacts {
  namespace: string;
  now: number;
  /** The spec checked (`checkDelegationSpec`). */
  check: DelegationCheck;
  binding: Binding;
  /** The record id this resource stored before (its annotation), if any. */
  declaredId: string | undefined;
  /** This resource's owner identity. */
  owner: RecordOwner;
  /** The organization the declared agent is registered to (read only for a bound, valid spec). */
  agentOrg?: string | undefined;
  /** The record stored under the declared id (or the spec's id), if any. */
  existing?: StoredDelegation | undefined;
  /** The stored owners of the delegation id and of the embedded agreement id. */
  owners: { delegation?: RecordOwner | undefined; agreement?: RecordOwner | undefined };
  /** The stored delegations the chain's links cite (`undefined` where none is stored). */
  ancestors?: readonly (StoredAncestor | undefined)[];
}

/** What `planStore` decided. */
export interface StorePlan {
  record: Delegation | undefined;
  refusals: Refusal[];
  /** What verify enforces for this resource before any write: the record it stored, if it is still its. */
  inForce: StoredDelegation | undefined;
  /** Store `record` (no refusal). */
  store: boolean;
  /** A link the chain cites is not stored (yet): retried, and queued when the parent is stored. */
  awaitingParent: boolean;
}

/** The refusals of a generation and whether to store it (see the module comment). */
export function planStore(f: StoreFacts): StorePlan {
  const { check, binding, declaredId, owner } = f;
  const refusals: Refusal[] = [...check.refusals];
  if (!binding.ok) refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: binding.message });
  const record = check.record;
  let stored: StoredDelegation | undefined;
  let awaitingParent = false;
  if (!record && binding.ok && declaredId !== undefined) {
    // This generation does not validate: what verify enforces is what this resource stored before.
    stored = f.existing && f.existing.orgId === binding.orgId && f.owners.delegation?.uid === owner.uid ? f.existing : undefined;
  }
  if (record) {
    if (declaredId !== undefined && declaredId !== record.delegation_id) {
      refusals.push({
        condition: "Valid",
        code: "SPEC_INVALID",
        message: `spec.delegation_id is immutable: this resource declared ${declaredId}; a new grant (${record.delegation_id}) is a new resource`,
      });
    }
    if (binding.ok) {
      if (f.agentOrg !== binding.orgId) {
        refusals.push({
          condition: "Bound",
          code: "NAMESPACE_NOT_BOUND",
          message: `spec.agent.agent_id: agent ${record.agent.agent_id} is not registered to ${binding.orgId}, the organization namespace ${f.namespace} is bound to`,
        });
      }
      stored = f.existing;
      const foreign: Refusal[] = [];
      const { delegation: delegationOwner, agreement: agreementOwner } = f.owners;
      if (delegationOwner && delegationOwner.uid !== owner.uid)
        foreign.push(notOwnedRefusal("delegation", declaredId ?? record.delegation_id, delegationOwner, "spec.delegation_id"));
      const embedded = record.intent_agreement;
      if (embedded && agreementOwner && agreementOwner.uid !== owner.uid) {
        foreign.push(notOwnedRefusal("agreement", embedded.agreement_id, agreementOwner, "spec.intent_agreement.agreement_id"));
      }
      if (foreign.length > 0) {
        refusals.push(...foreign);
        stored = undefined;
      } else if (stored && stored.orgId !== binding.orgId) {
        refusals.push({
          condition: "Bound",
          code: "NAMESPACE_NOT_BOUND",
          message: `spec.delegation_id: ${record.delegation_id} is stored for another organization`,
        });
        stored = undefined;
      } else if (stored && !stored.revokedAt) {
        const why = silentExtension(stored.record, record);
        if (why !== undefined) refusals.push({ condition: "Valid", code: "SPEC_INVALID", message: `refused as a silent extension: ${why}` });
      }
      if (record.delegation_chain.length > 0 && check.prepared && f.ancestors) {
        // A link cites a stored delegation; its declared copy is judged against it, never trusted.
        refusals.push(...storedChainRefusals(check.prepared, binding.orgId, f.ancestors));
        awaitingParent = f.ancestors.some((a) => a === undefined);
      }
    }
  }
  return { record, refusals, inForce: stored, store: record !== undefined && binding.ok && refusals.length === 0, awaitingParent };
}

/** What `planStatus` judges: the plan, what the store holds for this resource now, and the stored chain. */
export interface StatusFacts {
  namespace: string;
  generation: number | undefined;
  now: number;
  binding: Binding;
  record: Delegation | undefined;
  refusals: readonly Refusal[];
  /** What verify enforces for this resource now (after any write). */
  stored: StoredDelegation | undefined;
  /** The ids among the stored record and its chain that the store lists as revoked (read only when it is revoked). */
  revoked: ReadonlySet<string>;
  /** The stored delegations the STORED record's links cite, in order (undefined where none is). */
  ancestors: readonly (StoredAncestor | undefined)[];
  /** Why the embedded agreement's declared ledger was ignored, when it was. */
  ledgerIgnored?: string | undefined;
}

/** What a readiness policy judges. */
export interface Readiness {
  record: Delegation;
  stored: StoredDelegation;
  view: DelegationView;
  revoked: ReadonlySet<string>;
  ancestors: readonly (StoredAncestor | undefined)[];
}

/** A readiness policy: the Ready=False it decides, or undefined when it does not object. */
export type ReadinessPolicy = (r: Readiness) => DesiredCondition | undefined;

const notReady = (reason: DesiredCondition["reason"], message: string): DesiredCondition => ({ type: "Ready", status: "False", reason, message });

/** Revoked in the store (a declared revocation is the declared state, not a failure). */
const revokedPolicy: ReadinessPolicy = ({ record, stored, view, revoked }) => {
  if (record.status === "revoked" || (!stored.revokedAt && view.effective !== "revoked")) return undefined;
  const link = record.delegation_chain.find((l) => revoked.has(l.delegation_id));
  if (link)
    return notReady("CHAIN_LINK_REVOKED", `link ${link.delegation_id} above this grant is revoked, which revokes it (${stored.revokedReason ?? "revoked"})`);
  const finding = view.chainFindings.find((f) => f.code === "CHAIN_LINK_REVOKED");
  if (!stored.revokedAt && finding) return notReady("CHAIN_LINK_REVOKED", `${finding.message} (as stored)`);
  return notReady("DELEGATION_REVOKED", revokedMessage(stored));
};

/** The chain as its stored links give it no longer connects or no longer narrows (a stored parent changed since). */
const storedChainPolicy: ReadinessPolicy = ({ view }) => {
  const f = view.chainFindings.find((x) => x.code === "CHAIN_BROKEN" || x.code === "CHAIN_SCOPE_WIDENED");
  return f ? notReady(f.code, `as the stored parents give the chain: ${f.message}`) : undefined;
};

/** Expired (its own expiry or a stored link's), unless that is the declared state. */
const expiredPolicy: ReadinessPolicy = ({ record, stored, view }) => {
  if (view.effective !== "expired" || record.status === "expired") return undefined;
  const link = view.chainFindings.find((f) => f.code === "CHAIN_LINK_EXPIRED");
  return link
    ? notReady("CHAIN_LINK_EXPIRED", link.message)
    : notReady("DELEGATION_EXPIRED", `delegation ${stored.delegationId} expired at ${record.expires_at}; a renewal is a new grant`);
};

/** A stored link above is suspended: verify refuses what it delegated while it is. */
const suspendedParentPolicy: ReadinessPolicy = ({ record, ancestors }) => {
  const i = ancestors.findIndex((a) => a?.delegation.status === "suspended");
  if (i < 0) return undefined;
  const id = record.delegation_chain[i]?.delegation_id ?? ancestors[i]?.delegation.delegation_id;
  return notReady(
    "DELEGATION_SUSPENDED",
    `link ${i + 1} (${id}) above this grant is suspended as stored, which suspends everything below it; verify answers DENY until it is lifted`,
  );
};

/** The readiness policies, in order: the first that objects decides. */
export const READINESS: readonly ReadinessPolicy[] = [revokedPolicy, storedChainPolicy, expiredPolicy, suspendedParentPolicy];

/** Ready of a stored, unrefused grant: the first objection of `READINESS`, else Ready True. */
export function readinessOf(r: Readiness, policies: readonly ReadinessPolicy[] = READINESS): DesiredCondition {
  for (const p of policies) {
    const c = p(r);
    if (c) return c;
  }
  return {
    type: "Ready",
    status: "True",
    reason: "Reconciled",
    message: `stored as delegation ${r.stored.delegationId}; effective status ${r.view.effective}${suspendedNote(r.view)}`,
  };
}

/** What `planStatus` decided. */
export interface StatusPlan {
  conditions: DesiredCondition[];
  fields: Record<string, unknown>;
  view: DelegationView | undefined;
}

/** The effective view of what is stored, with its chain as the stored parents give it. */
export function storedView(
  stored: StoredDelegation,
  now: number,
  revoked: ReadonlySet<string>,
  ancestors: readonly (StoredAncestor | undefined)[],
): DelegationView {
  return delegationView(stored.record, now, revoked, stored.record.delegation_chain.length > 0 ? { orgId: stored.orgId, ancestors } : undefined);
}

/** The conditions and fields of the status (see the module comment). */
export function planStatus(f: StatusFacts): StatusPlan {
  const { record, refusals, stored, binding } = f;
  const view = stored ? storedView(stored, f.now, f.revoked, f.ancestors) : undefined;
  const refused = refusals.length > 0;
  const chainDepth = record?.delegation_chain.length;
  const stayed = storedCondition(f.generation, refusals, refused, stored, "the record stored before");
  const conditions: DesiredCondition[] = [
    conditionOf("Valid", refusals, { reason: "Validated", message: "the spec validates; its times, scope and conditions are well-formed" }),
    record
      ? conditionOf("ChainValid", refusals, {
          reason: "ChainIntact",
          message: chainDepth ? `${chainDepth} link(s) connect the principal to the agent, each only narrowing` : "a direct grant from the principal",
        })
      : { type: "ChainValid", status: "Unknown", reason: "NotChecked", message: "the spec does not validate" },
    conditionOf("Bound", refusals, { reason: "Bound", message: binding.ok ? `namespace ${f.namespace} is bound to ${binding.orgId}` : "" }),
    // The Stored condition says when the embedded agreement's declared ledger was ignored (the service keeps the ledger).
    f.ledgerIgnored !== undefined && stayed.status === "True" ? { ...stayed, message: `${stayed.message}; embedded agreement: ${f.ledgerIgnored}` } : stayed,
    refused || !stored || !record || !view
      ? notReady(
          refusals[0]?.code ?? "NotStored",
          `${summary(refusals) || "not stored"}${stored && view ? `; ${inForce(stored, view)}` : refused ? "; nothing is stored for this resource, so verify knows no such grant" : ""}`,
        )
      : readinessOf({ record, stored, view, revoked: f.revoked, ancestors: f.ancestors }),
  ];
  const fields = {
    // What verify enforces for this resource's record; Invalid only when nothing is stored.
    phase: view ? phaseOf(view.effective) : refused ? "Invalid" : "Pending",
    effectiveStatus: view?.effective,
    expiresAt: view && Number.isFinite(view.expiresAtMs) && view.expiresAtMs > 0 ? new Date(view.expiresAtMs).toISOString() : undefined,
    chainDepth,
    revokedAt: stored?.revokedAt ? stored.revokedAt.toISOString() : undefined,
  };
  return { conditions, fields, view };
}
