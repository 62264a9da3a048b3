/**
 * Which declared resource owns a record (store/record-owners.ts): the resource's kind, namespace
 * and name. In Kubernetes one object at a time holds a kind/namespace/name, so the identity
 * survives a delete and re-apply (GitOps re-creating the same declaration is the same owner),
 * while another namespace, another name or another kind never is. The object's uid is not the
 * identity: it changes when the same declaration is applied again after a delete.
 */

/** The kinds of resources that own records. */
export type OwnerKind = "Delegation" | "IntentAgreement" | "Subscription";

/** The owner identity of resource `kind` `namespace`/`name`. */
export function ownerIdentity(kind: OwnerKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}
