/**
 * What the Delegation reconciler reads, behind one small interface (`DelegationReads`) so the
 * gather steps run against Postgres in the controller and against a fake in unit tests.
 *
 * `gatherStoreFacts`: everything `planStore` judges a generation on (the namespace binding, the
 * agent's organization, the record stored under the id, the stored owners of its ids, the
 * stored delegations its chain cites), each read only when the plan can use it.
 * `gatherStatusFacts`: what the status is judged on once any write is done (the revocations of
 * a revoked record and its chain, the stored delegations the STORED record's links cite; read
 * once per reconcile: when those links are the ones `gatherStoreFacts` read, its answer is used,
 * since a write of this record never changes the records above it).
 */
import type { StoredAncestor } from "../../core/delegation/index.js";
import type { Binding } from "../../sources/kubernetes/index.js";
import { loadDelegation, loadStoredChain, type StoredDelegation, type Queryable, ownerOf, type RecordOwner, revokedDelegationIds } from "../../store/index.js";
import type { DelegationCheck } from "./delegation-checks.js";
import type { StoreFacts } from "./delegation-plan.js";

/** The reads of the Delegation reconciler. */
export interface DelegationReads {
  /** The namespace's organization (or why it has none). */
  binding(namespace: string): Promise<Binding>;
  /** The organization the agent is registered to. */
  agentOrg(agentId: string): Promise<string | undefined>;
  /** The stored delegation `id` of organization `org` (an id names a record within one organization). */
  delegation(org: string, id: string): Promise<StoredDelegation | undefined>;
  /** The stored owner of record `id` of organization `org`. */
  owner(org: string, kind: "delegation" | "agreement", id: string): Promise<RecordOwner | undefined>;
  /** The stored delegations `ids` of organization `org` (in order, undefined where none is stored). */
  storedChain(org: string | null, ids: readonly string[]): Promise<(StoredAncestor | undefined)[]>;
  /** The ids among `ids` that the store lists as revoked in organization `org`. */
  revokedIds(org: string | null, ids: readonly string[]): Promise<Set<string>>;
}

/** The reads against Postgres (`q`) and the namespace bindings. */
export function pgDelegationReads(q: Queryable, bindings: Pick<DelegationReads, "binding" | "agentOrg">): DelegationReads {
  return {
    binding: (ns) => bindings.binding(ns),
    agentOrg: (id) => bindings.agentOrg(id),
    delegation: (org, id) => loadDelegation(q, id, undefined, org),
    owner: (org, kind, id) => ownerOf(q, kind, id, org),
    storedChain: (org, ids) => loadStoredChain(q, org, ids),
    revokedIds: (org, ids) => revokedDelegationIds(q, org, ids),
  };
}

/** Reads what `planStore` needs for `check` (a checked spec) of the resource `owner` in `namespace`. */
export async function gatherStoreFacts(
  reads: DelegationReads,
  input: { namespace: string; now: number; check: DelegationCheck; declaredId: string | undefined; owner: RecordOwner },
): Promise<StoreFacts> {
  const binding = await reads.binding(input.namespace);
  const facts: StoreFacts = { ...input, binding, owners: {} };
  const record = input.check.record;
  if (!binding.ok) return facts;
  if (!record) {
    if (input.declaredId === undefined) return facts;
    facts.existing = await reads.delegation(binding.orgId, input.declaredId);
    if (facts.existing) facts.owners.delegation = await reads.owner(binding.orgId, "delegation", input.declaredId);
    return facts;
  }
  const id = input.declaredId ?? record.delegation_id;
  facts.agentOrg = await reads.agentOrg(record.agent.agent_id);
  facts.existing = await reads.delegation(binding.orgId, id);
  facts.owners.delegation = await reads.owner(binding.orgId, "delegation", id);
  if (record.intent_agreement) facts.owners.agreement = await reads.owner(binding.orgId, "agreement", record.intent_agreement.agreement_id);
  // A link names a delegation of the child's organization only.
  if (record.delegation_chain.length > 0 && input.check.prepared)
    facts.ancestors = await reads.storedChain(
      binding.orgId,
      record.delegation_chain.map((l) => l.delegation_id),
    );
  return facts;
}

/**
 * What the status of `stored` is judged on: its revocations (when revoked) and its chain as
 * stored; `gathered` (the facts `gatherStoreFacts` read) gives the chain when its record cites
 * the same links.
 */
export async function gatherStatusFacts(
  reads: DelegationReads,
  stored: StoredDelegation | undefined,
  gathered?: Pick<StoreFacts, "check" | "ancestors">,
): Promise<{ revoked: Set<string>; ancestors: (StoredAncestor | undefined)[] }> {
  if (!stored) return { revoked: new Set(), ancestors: [] };
  const links = stored.record.delegation_chain.map((l) => l.delegation_id);
  const revoked = stored.revokedAt ? await reads.revokedIds(stored.orgId, [stored.delegationId, ...links]) : new Set<string>();
  if (links.length === 0) return { revoked, ancestors: [] };
  const read = gathered?.ancestors;
  const readLinks = gathered?.check.record?.delegation_chain.map((l) => l.delegation_id);
  const same = read !== undefined && readLinks !== undefined && readLinks.length === links.length && readLinks.every((id, i) => id === links[i]);
  return { revoked, ancestors: same ? [...read] : await reads.storedChain(stored.orgId, links) };
}
