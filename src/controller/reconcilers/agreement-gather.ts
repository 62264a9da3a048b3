/**
 * What the IntentAgreement reconciler reads, behind one small interface (`AgreementReads`) so the
 * gather steps run against Postgres (and the informer cache) in the controller and against a
 * fake in unit tests; and the pure plan of what a generation is refused for or waits on.
 *
 * `gatherAgreementFacts`: everything `planAgreementStore` judges a generation on (the namespace
 * binding, the delegation `spec.delegationRef.name` names and its stored record, the agreement
 * stored under the id and its stored owner), each read only when the plan can use it.
 * `gatherEnforcedFacts`: what verify's answer for the stored agreement is judged on (the
 * delegation it is stored with and that delegation's chain as stored). Every read is within the
 * namespace's organization: an id names a record within one organization.
 */
import { prepareDelegation, type StoredAncestor } from "../../core/delegation/index.js";
import type { Binding } from "../../sources/kubernetes/index.js";
import {
  agreementRow,
  loadDelegation,
  loadStoredChain,
  ownerOf,
  type AgreementRow,
  type Queryable,
  type RecordOwner,
  type StoredDelegation,
} from "../../store/index.js";
import type { Refusal } from "../spec-errors.js";
import { bindingRefusals, type AgreementCheck } from "./agreement-checks.js";
import { notOwnedRefusal } from "./ownership.js";

/** The reads of the IntentAgreement reconciler. */
export interface AgreementReads {
  /** The namespace's organization (or why it has none). */
  binding(namespace: string): Promise<Binding>;
  /** The delegation_id the Delegation `name` in `namespace` declares (undefined: no such Delegation, or no id yet). */
  delegationRef(namespace: string, name: string): string | undefined;
  /** The stored delegation `id` of organization `org`. */
  delegation(org: string | null, id: string): Promise<StoredDelegation | undefined>;
  /** The stored agreement `id` of organization `org`. */
  agreement(org: string, id: string): Promise<AgreementRow | undefined>;
  /** The stored owner of agreement `id` of organization `org`. */
  owner(org: string, id: string): Promise<RecordOwner | undefined>;
  /** The stored delegations `ids` of organization `org` (in order, undefined where none is stored). */
  storedChain(org: string | null, ids: readonly string[]): Promise<(StoredAncestor | undefined)[]>;
}

/** The reads against Postgres (`q`), the namespace bindings and the Delegation cache. */
export function pgAgreementReads(q: Queryable, cluster: Pick<AgreementReads, "binding" | "delegationRef">): AgreementReads {
  return {
    binding: (ns) => cluster.binding(ns),
    delegationRef: (ns, name) => cluster.delegationRef(ns, name),
    delegation: (org, id) => loadDelegation(q, id, undefined, org),
    agreement: (org, id) => agreementRow(q, id, org),
    owner: (org, id) => ownerOf(q, "agreement", id, org),
    storedChain: (org, ids) => loadStoredChain(q, org, ids),
  };
}

/** What `planAgreementStore` judges a generation on. */
export interface AgreementFacts {
  namespace: string;
  check: AgreementCheck;
  /** The id this resource stored before (`writ.dev/record-id`). */
  declaredId: string | undefined;
  /** The resource's identity. */
  owner: RecordOwner;
  binding: Binding;
  /** The delegation_id the referenced Delegation declares. */
  delegationId?: string;
  /** The stored delegation under `delegationId`. */
  delegation?: StoredDelegation;
  /** The stored agreement under the declared (or the spec's) id, and its stored owner. */
  row?: AgreementRow;
  rowOwner?: RecordOwner;
}

/** Reads what `planAgreementStore` needs for `check` (a checked spec) of the resource `owner` in `namespace`. */
export async function gatherAgreementFacts(
  reads: AgreementReads,
  input: { namespace: string; check: AgreementCheck; declaredId: string | undefined; owner: RecordOwner },
): Promise<AgreementFacts> {
  const binding = await reads.binding(input.namespace);
  const facts: AgreementFacts = { ...input, binding };
  const { record, prepared } = input.check;
  if (!binding.ok) return facts;
  if (!record) {
    if (input.declaredId === undefined) return facts;
    facts.row = await reads.agreement(binding.orgId, input.declaredId);
    if (facts.row) facts.rowOwner = await reads.owner(binding.orgId, input.declaredId);
    return facts;
  }
  if (!prepared) return facts;
  facts.delegationId = reads.delegationRef(input.namespace, input.check.delegationName ?? "");
  if (facts.delegationId) facts.delegation = await reads.delegation(binding.orgId, facts.delegationId);
  const id = input.declaredId ?? record.agreement_id;
  facts.row = await reads.agreement(binding.orgId, id);
  facts.rowOwner = await reads.owner(binding.orgId, id);
  return facts;
}

/** The plan of a generation (pure): every refusal, why it waits (if it does), the delegation to bind to and the stored agreement that stays in force. */
export interface AgreementStorePlan {
  refusals: Refusal[];
  pending: string | undefined;
  delegation: StoredDelegation | undefined;
  row: AgreementRow | undefined;
}

/** Plans a generation from `f` (pure; the order of the refusals is the order of the checks). */
export function planAgreementStore(f: AgreementFacts): AgreementStorePlan {
  const refusals: Refusal[] = [...f.check.refusals];
  const { binding, declaredId, owner } = f;
  if (!binding.ok) refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: binding.message });
  const { record, prepared } = f.check;
  let pending: string | undefined;
  let delegation: StoredDelegation | undefined;
  let row: AgreementRow | undefined;
  if (!record && binding.ok && declaredId !== undefined) {
    // This generation does not validate: what verify enforces is what this resource stored before.
    row = f.row && f.row.orgId === binding.orgId && f.rowOwner?.uid === owner.uid ? f.row : undefined;
  }
  if (record && prepared) {
    if (declaredId !== undefined && declaredId !== record.agreement_id) {
      refusals.push({
        condition: "Valid",
        code: "SPEC_INVALID",
        message: `spec.agreement_id is immutable: this resource declared ${declaredId}; a new agreement is a new resource`,
      });
    }
    if (binding.ok) {
      const refName = f.check.delegationName ?? "";
      const targetId = f.delegationId;
      if (!targetId) pending = `spec.delegationRef.name: no Delegation ${refName} in namespace ${f.namespace}`;
      else {
        delegation = f.delegation;
        if (!delegation) pending = `the Delegation ${refName} (${targetId}) is not stored yet`;
        else if (delegation.orgId !== binding.orgId) {
          refusals.push({
            condition: "Bound",
            code: "NAMESPACE_NOT_BOUND",
            message: `spec.delegationRef: delegation ${targetId} is stored for another organization`,
          });
          delegation = undefined;
        } else refusals.push(...bindingRefusals(prepared, prepareDelegation(delegation.record)));
      }
      row = f.row;
      const id = declaredId ?? record.agreement_id;
      const current = f.rowOwner;
      if (current && current.uid !== owner.uid) {
        refusals.push(notOwnedRefusal("agreement", id, current, "spec.agreement_id"));
        row = undefined;
      } else if (row && row.orgId !== binding.orgId) {
        refusals.push({
          condition: "Bound",
          code: "NAMESPACE_NOT_BOUND",
          message: `spec.agreement_id: ${record.agreement_id} is stored for another organization`,
        });
        row = undefined;
      }
    }
  }
  return { refusals, pending, delegation, row };
}

/** What verify's answer for the stored agreement `row` is judged on: the delegation it is stored with and that delegation's chain as stored. */
export async function gatherEnforcedFacts(
  reads: AgreementReads,
  row: AgreementRow | undefined,
  delegation: StoredDelegation | undefined,
): Promise<{ bound: StoredDelegation | undefined; ancestors: (StoredAncestor | undefined)[] }> {
  const bound = row?.delegationId && row.delegationId !== delegation?.delegationId ? await reads.delegation(row.orgId, row.delegationId) : delegation;
  // The delegation's chain as its stored parents give it (as verify judges it), not its copies.
  const boundChain = bound?.record.delegation_chain.map((l) => l.delegation_id) ?? [];
  const ancestors = row && bound && boundChain.length > 0 ? await reads.storedChain(bound.orgId, boundChain) : [];
  return { bound, ancestors };
}
