/**
 * Deriving a sub-delegation from its parent, and every way it would widen the parent.
 *
 * The child keeps the parent's root `principal`; its `delegation_chain` is the parent's chain
 * plus one link for the parent (delegated by the root principal for a direct grant, else by
 * the agent the parent's last link delegated to; the parent's scope, conditions and window).
 * Unset fields inherit from the parent: scope members (a child scope is merged over the
 * parent's), conditions, expires_at, purpose, revocable, privilege. The agent and the
 * delegation_id are the child's own; approval, re-confirmation and renewal marks never carry
 * over.
 *
 * `narrowingProblems` lists, each sentence starting with the field's name, every way the child
 * is wider than its parent (core `scopeWidenings` and `conditionWidenings`, the window,
 * revocability, privilege) and whatever `prepareChain` finds wrong with the whole chain.
 */
import { canonicalJson } from "../../core/canonical/index.js";
import { conditionWidenings, parentLink, prepareChain, privilegeOf, scopeWidenings, type Delegation, type Privilege } from "../../core/delegation/index.js";
import { parseInstant } from "../../core/time/index.js";

const CHILD_MEMBERS = new Set([
  "delegation_id",
  "agent",
  "granted_at",
  "expires_at",
  "purpose",
  "scope",
  "conditions",
  "revocable",
  "revocation_endpoint",
  "privilege",
  "approval",
  "principal",
  "delegation_chain",
  "status",
]);
const RANK: Readonly<Record<Privilege, number>> = { standard: 0, standing: 1, high: 2 };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Why `fields` cannot describe a child of `parent` (a sentence per problem); empty when they can. */
export function childFieldProblems(parent: Delegation, fields: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of Object.keys(fields)) if (!CHILD_MEMBERS.has(k)) out.push(`${k}: a sub-delegation cannot set it`);
  if (fields.principal !== undefined && canonicalJson(fields.principal) !== canonicalJson(parent.principal)) {
    out.push("principal: a sub-delegation keeps its parent's root principal");
  }
  if (fields.delegation_chain !== undefined && canonicalJson(fields.delegation_chain) !== canonicalJson([...parent.delegation_chain, parentLink(parent)])) {
    out.push("delegation_chain: derived from the parent; leave it out");
  }
  if (fields.status !== undefined && fields.status !== "active") out.push("status: a new sub-delegation is active");
  if (fields.scope !== undefined && !isObj(fields.scope)) out.push("scope: must be an object");
  return out;
}

/** The child of `parent` described by `fields` (see the module comment); `at` is the default granted_at. */
export function deriveChild(parent: Delegation, fields: Record<string, unknown>, at: string): Delegation {
  const scope = { ...structuredClone(parent.scope), ...(isObj(fields.scope) ? structuredClone(fields.scope) : {}) };
  const child: Record<string, unknown> = {
    delegation_id: fields.delegation_id,
    principal: structuredClone(parent.principal),
    agent: structuredClone(fields.agent),
    granted_at: fields.granted_at ?? at,
    expires_at: fields.expires_at ?? parent.expires_at,
    purpose: fields.purpose ?? parent.purpose,
    scope,
    conditions: structuredClone(fields.conditions ?? parent.conditions),
    revocable: fields.revocable ?? parent.revocable,
    delegation_chain: [...structuredClone(parent.delegation_chain), parentLink(parent)],
    status: "active",
  };
  const endpoint = fields.revocation_endpoint ?? parent.revocation_endpoint;
  if (endpoint !== undefined) child.revocation_endpoint = endpoint;
  const privilege = fields.privilege ?? parent.privilege;
  if (privilege !== undefined) child.privilege = privilege;
  if (fields.approval !== undefined) child.approval = structuredClone(fields.approval);
  return child as unknown as Delegation;
}

function timeProblems(parent: Delegation, child: Delegation): string[] {
  const out: string[] = [];
  const pg = parseInstant(parent.granted_at);
  const pe = parseInstant(parent.expires_at);
  const cg = parseInstant(child.granted_at);
  const ce = parseInstant(child.expires_at);
  if (cg === undefined) out.push(`granted_at: ${JSON.stringify(child.granted_at)} is not an RFC 3339 date-time`);
  if (ce === undefined) out.push(`expires_at: ${JSON.stringify(child.expires_at)} is not an RFC 3339 date-time`);
  if (cg === undefined || ce === undefined || pg === undefined || pe === undefined) return out;
  if (ce > pe) out.push(`expires_at: ${child.expires_at} is later than the parent's ${parent.expires_at}`);
  if (cg < pg) out.push(`granted_at: ${child.granted_at} is earlier than the parent's ${parent.granted_at}`);
  if (cg >= pe) out.push(`granted_at: ${child.granted_at} is not before the parent's expiry ${parent.expires_at}; nothing is left to delegate`);
  if (ce <= cg) out.push(`expires_at: ${child.expires_at} is not after granted_at ${child.granted_at}`);
  return out;
}

/** Every way `child` widens `parent` or breaks the chain, each sentence starting with the field. */
export function narrowingProblems(parent: Delegation, child: Delegation): string[] {
  const out: string[] = [];
  if (parent.status !== "active") out.push(`status: the parent is ${parent.status}; only an active grant can be delegated further`);
  out.push(...scopeWidenings(parent.scope, child.scope).map((w) => `scope.${w}`));
  out.push(...conditionWidenings(parent.conditions, child.conditions));
  out.push(...timeProblems(parent, child));
  if (parent.revocable !== false && child.revocable === false) out.push("revocable: false while the parent is revocable");
  const pp = privilegeOf(parent);
  const cp = privilegeOf(child);
  if (RANK[cp] < RANK[pp]) out.push(`privilege: ${cp} is lower than the parent's ${pp}`);
  const chain = prepareChain(child);
  if (chain.chainBroken !== undefined) out.push(`delegation_chain: ${chain.chainBroken}`);
  // A widening of the final hop is already reported above, field by field; one higher up is the parent's own.
  if (chain.chainWidened !== undefined && !chain.chainWidened.startsWith("this delegation (")) out.push(`delegation_chain: ${chain.chainWidened}`);
  return out;
}
