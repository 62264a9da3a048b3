/**
 * Participant organizations: the closed list of organization types and statuses.
 *
 * Promise: `isOrgType` accepts exactly the five types of the spec; an organization is `active`
 * on creation (the only status there is so far).
 */

/** The organization types of the spec, in the spec's order. */
export const ORG_TYPES = ["agent_operator", "wallet", "bank_issuer", "processor_psp", "merchant"] as const;

/** An organization type. */
export type OrgType = (typeof ORG_TYPES)[number];

/** Organization statuses (only `active` exists; it is the status on creation). */
export const ORG_STATUSES = ["active"] as const;

/** An organization status. */
export type OrgStatus = (typeof ORG_STATUSES)[number];

/** True when `v` is one of ORG_TYPES. */
export function isOrgType(v: unknown): v is OrgType {
  return typeof v === "string" && (ORG_TYPES as readonly string[]).includes(v);
}

/** Longest organization (and key) name accepted, in characters. */
export const MAX_NAME_LENGTH = 200;
