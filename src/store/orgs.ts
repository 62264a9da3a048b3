/**
 * Participant organizations of the registry (table `orgs`, migrations/0030_registry.sql).
 *
 * Promise: an organization is created `active` with a fresh random `org_` id and never deleted.
 */
import { randomBytes } from "node:crypto";
import { formatId, ID_RANDOM_BYTES, type OrgStatus, type OrgType } from "../core/registry/index.js";
import type { Queryable } from "./pool.js";

/** An organization as the API shows it. */
export interface Org {
  org_id: string;
  name: string;
  org_type: OrgType;
  status: OrgStatus;
  /** RFC 3339, UTC. */
  created_at: string;
}

interface Row {
  org_id: string;
  name: string;
  org_type: OrgType;
  status: OrgStatus;
  created_at: Date;
}

function toOrg(r: Row): Org {
  return { org_id: r.org_id, name: r.name, org_type: r.org_type, status: r.status, created_at: r.created_at.toISOString() };
}

/** Creates an active organization at `now`. */
export async function createOrg(q: Queryable, input: { name: string; org_type: OrgType }, now: Date): Promise<Org> {
  const orgId = formatId("org", randomBytes(ID_RANDOM_BYTES));
  const { rows } = await q.query<Row>(
    `INSERT INTO orgs (org_id, name, org_type, status, created_at) VALUES ($1, $2, $3, 'active', $4)
     RETURNING org_id, name, org_type, status, created_at`,
    [orgId, input.name, input.org_type, now],
  );
  return toOrg(rows[0] as Row);
}

/** The organization `orgId`, or undefined. */
export async function getOrg(q: Queryable, orgId: string): Promise<Org | undefined> {
  const { rows } = await q.query<Row>("SELECT org_id, name, org_type, status, created_at FROM orgs WHERE org_id = $1", [orgId]);
  return rows[0] ? toOrg(rows[0]) : undefined;
}
