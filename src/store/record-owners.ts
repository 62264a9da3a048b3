/**
 * Which declared resource acts on a record (table `record_owners`, migrations/0260_record_owners.sql).
 *
 * Promises:
 * - A delegation or an agreement has at most ONE owner: the resource (namespace, name, uid)
 *   through which it was first stored. `claimRecord` fixes it in the caller's transaction
 *   (a concurrent claim of the same record waits on the unique index and then loses); later it
 *   answers whether the given resource is that owner. A record stored without a resource (over
 *   the API, by the demo seed, before owners were recorded) has none until a resource that
 *   declares it in full claims it.
 * - A subscription may be claimed by several resources (`shared`): each claim is released on
 *   its own (`releaseSubscriptionClaim`), and the caller deactivates the subscription when none is left.
 * - Nothing here trusts an annotation: callers pass the resource's identity, and the stored
 *   owner is compared with it.
 * - A delegation or agreement id names a record within one organization (docs/scale.md,
 *   "Organization-scoped ids"): its owner is kept and read with the organization of the
 *   owning resource's namespace (`orgId`), so two organizations' records under one id each have
 *   their own. Subscription claims carry no organization (their ids are the service's).
 */
import type { Queryable } from "./pool.js";

/** The kinds of records resources own. */
export type OwnedKind = "delegation" | "agreement" | "subscription";

/** A declared resource: its namespace, name and uid. */
export interface RecordOwner {
  namespace: string;
  name: string;
  uid: string;
}

/** What `claimRecord` found. */
export type Claim = { ok: true; claimedNow: boolean } | { ok: false; owner: RecordOwner };

/** `ns/name` of an owner, for messages. */
export function ownerName(o: RecordOwner): string {
  return `${o.namespace}/${o.name}`;
}

/**
 * Claims `kind` `id` for `owner` unless another resource owns it (see the module comment).
 * Subscriptions are shared: the claim is added beside the others.
 */
export async function claimRecord(q: Queryable, kind: OwnedKind, id: string, owner: RecordOwner, orgId: string | null): Promise<Claim> {
  const org = kind === "subscription" ? "" : (orgId ?? "");
  const conflict = kind === "subscription" ? "(org_id, kind, record_id, uid)" : "(org_id, kind, record_id) WHERE kind <> 'subscription'";
  const { rowCount } = await q.query(
    `INSERT INTO record_owners (org_id, kind, record_id, namespace, name, uid) VALUES ($6, $1, $2, $3, $4, $5) ON CONFLICT ${conflict} DO NOTHING`,
    [kind, id, owner.namespace, owner.name, owner.uid, org],
  );
  if (rowCount === 1) return { ok: true, claimedNow: true };
  if (kind === "subscription") return { ok: true, claimedNow: false };
  const current = await ownerOf(q, kind, id, orgId);
  if (!current || current.uid === owner.uid) return { ok: true, claimedNow: false };
  return { ok: false, owner: current };
}

/** The owner of delegation or agreement `id` of organization `orgId` (null: none), or undefined when no resource owns it. */
export async function ownerOf(q: Queryable, kind: Exclude<OwnedKind, "subscription">, id: string, orgId: string | null): Promise<RecordOwner | undefined> {
  const { rows } = await q.query<RecordOwner>("SELECT namespace, name, uid FROM record_owners WHERE org_id = $3 AND kind = $1 AND record_id = $2", [
    kind,
    id,
    orgId ?? "",
  ]);
  return rows[0];
}

/** The records of `kind` claimed by the resource `uid` (of organization `orgId` for delegations and agreements). */
export async function claimsOf(q: Queryable, kind: OwnedKind, uid: string, orgId: string | null): Promise<string[]> {
  const { rows } = await q.query<{ record_id: string }>("SELECT record_id FROM record_owners WHERE uid = $1 AND kind = $2 AND org_id = $3 ORDER BY record_id", [
    uid,
    kind,
    kind === "subscription" ? "" : (orgId ?? ""),
  ]);
  return rows.map((r) => r.record_id);
}

/** The delegations or agreements the resource `uid` owns, with their organizations, in organization and id order. */
export async function claimsOfResource(q: Queryable, kind: Exclude<OwnedKind, "subscription">, uid: string): Promise<{ orgId: string; recordId: string }[]> {
  const { rows } = await q.query<{ org_id: string; record_id: string }>(
    "SELECT org_id, record_id FROM record_owners WHERE uid = $1 AND kind = $2 ORDER BY org_id, record_id",
    [uid, kind],
  );
  return rows.map((r) => ({ orgId: r.org_id, recordId: r.record_id }));
}

/** The number of resources that claim `kind` `id`. */
export async function claimCount(q: Queryable, kind: OwnedKind, id: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM record_owners WHERE kind = $1 AND record_id = $2", [kind, id]);
  return rows[0]?.n ?? 0;
}

/** Releases the claim of resource `uid` on subscription `id`; answers the claims left (the row of `id` is locked meanwhile). */
export async function releaseSubscriptionClaim(q: Queryable, id: string, uid: string): Promise<number> {
  await q.query("SELECT 1 FROM subscriptions WHERE subscription_id = $1 FOR UPDATE", [id]);
  await q.query("DELETE FROM record_owners WHERE kind = 'subscription' AND record_id = $1 AND uid = $2", [id, uid]);
  return claimCount(q, "subscription", id);
}
