/**
 * A resource acts only on the record it created (src/store/record-owners.ts): before a
 * reconciler stores, changes or revokes a delegation or agreement it checks the stored owner
 * against the resource's identity (namespace, name, uid), never against the `writ.dev/record-id`
 * annotation, which anyone who may edit the resource can write. A record another resource owns
 * is refused with RECORD_NOT_OWNED, and nothing is written through this resource.
 */
import { type Queryable, claimRecord, ownerName, ownerOf, type RecordOwner } from "../../store/index.js";
import type { Refusal } from "../spec-errors.js";

/** The two kinds of records with one owner each. */
export type SingleOwnerKind = "delegation" | "agreement";

/** Thrown inside a store transaction when the record turned out to be another resource's: the transaction rolls back. */
export class RecordNotOwnedError extends Error {
  override readonly name = "RecordNotOwnedError";
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

/** The refusal of acting on `kind` `id`, owned by `other`; `field` names the spec member that points at it. */
export function notOwnedRefusal(kind: SingleOwnerKind, id: string, other: RecordOwner, field: string): Refusal {
  return {
    condition: "Bound",
    code: "RECORD_NOT_OWNED",
    message: `${field}: ${kind} ${id} was created by another resource (${ownerName(other)}); a resource acts only on the record it created, so nothing is stored, changed or revoked through this one`,
  };
}

/** The refusal when `kind` `id` of organization `orgId` is owned by a resource other than `owner`, else undefined (owned by it, or by none). */
export async function foreignOwnerRefusal(
  q: Queryable,
  kind: SingleOwnerKind,
  orgId: string,
  id: string,
  owner: RecordOwner,
  field: string,
): Promise<Refusal | undefined> {
  const current = await ownerOf(q, kind, id, orgId);
  return current && current.uid !== owner.uid ? notOwnedRefusal(kind, id, current, field) : undefined;
}

/** True when `owner` is the stored owner of `kind` `id` of organization `orgId` (a record no resource owns is nobody's). */
export async function ownedBy(q: Queryable, kind: SingleOwnerKind, orgId: string, id: string, owner: RecordOwner): Promise<boolean> {
  return (await ownerOf(q, kind, id, orgId))?.uid === owner.uid;
}

/** Claims `kind` `id` of organization `orgId` for `owner` in the caller's transaction, or throws RecordNotOwnedError. */
export async function claimOrRefuse(q: Queryable, kind: SingleOwnerKind, orgId: string, id: string, owner: RecordOwner, field: string): Promise<void> {
  const claim = await claimRecord(q, kind, id, owner, orgId);
  if (!claim.ok) throw new RecordNotOwnedError(notOwnedRefusal(kind, id, claim.owner, field));
}
