/**
 * Grants for revocation-propagation runs (`npm run bench:propagation`,
 * test/e2e/revocation-watch.test.ts): an operator organization with a verify key, and grants
 * each made of its own registered agent, a signed agreement (intent `i1`: at most 100 USD per
 * payment, 1,000,000 USD in all, for a day) and the delegation binding it, stored in Postgres
 * through the store's repository functions, as the controller would have stored them. Plus the
 * Delegation and IntentAgreement resources that declare them, and the verify request that
 * answers ALLOW for a grant until it is revoked.
 */
import { claimRecord } from "../../../src/store/record-owners.js";
import { ownerIdentity } from "../../../src/core/crd/index.js";
import { randomBytes } from "node:crypto";
import type { IntentAgreement } from "../../../src/core/agreement/index.js";
import { agreementSpecOf, delegationSpecOf } from "../../../src/core/crd/index.js";
import type { Delegation } from "../../../src/core/delegation/index.js";
import { signerFromSeed } from "../../../src/core/jose/index.js";
import { defaultScopes } from "../../../src/core/registry/index.js";
import { issueKey } from "../../../src/store/keys.js";
import { createOrg } from "../../../src/store/orgs.js";
import type { Pool } from "pg";
import { storeGrant } from "../grant.js";
import { sha256 } from "../../../src/core/canonical/index.js";

const PRINCIPAL_ID = "biz_propagation";
const principalKey = signerFromSeed(sha256("writ propagation bench principal").toString("hex"));

/** One stored grant. */
export interface Grant {
  /** Resource name of its Delegation (and `<name>-agreement` of its IntentAgreement). */
  name: string;
  agentId: string;
  delegationId: string;
  agreementId: string;
  delegation: Delegation;
  agreement: IntentAgreement;
}

/** An operator organization and its verify key. */
export interface Operator {
  orgId: string;
  key: string;
}

/** Creates an operator organization with a key of the default scopes (verify among them). */
export async function createOperator(pool: Pool, name: string): Promise<Operator> {
  const now = new Date();
  const org = await createOrg(pool, { name, org_type: "agent_operator" }, now);
  const key = await issueKey(pool, { org_id: org.org_id, name: `${name} verify`, scopes: defaultScopes("agent_operator") }, now);
  return { orgId: org.org_id, key: key.token };
}

/** Stores `count` grants named `<prefix>-<i>` for `orgId`, `parallel` at a time. */
export async function storeGrants(pool: Pool, orgId: string, prefix: string, count: number, parallel = 8): Promise<Grant[]> {
  const now = Date.now();
  const grants: Grant[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      for (let i = next++; i < count; i = next++) {
        const name = `${prefix}-${String(i).padStart(4, "0")}`;
        const agentId = `agent_${name.replace(/-/g, "_")}`;
        const { delegation, agreement } = await storeGrant(pool, {
          orgId,
          agentId,
          agreementId: `agr_${name.replace(/-/g, "_")}`,
          delegationId: `del_${name.replace(/-/g, "_")}`,
          principal: { id: PRINCIPAL_ID, key: principalKey, agentPrincipalId: "prn_propagation" },
          purpose: "propagation bench purchases",
          cumulative: 1_000_000,
          now,
        });
        grants[i] = { name, agentId, delegationId: delegation.delegation_id, agreementId: agreement.agreement_id, delegation, agreement };
      }
    }),
  );
  return grants;
}

/**
 * The Delegation resource declaring `g`. With `stored`, it carries what the controller adds
 * once it stored the record: the finalizer `writ.dev/revoke` and the record-id annotation.
 */
export function delegationResource(g: Grant, opts: { stored?: boolean } = {}): Record<string, unknown> {
  return {
    apiVersion: "writ.dev/v1alpha1",
    kind: "Delegation",
    metadata: {
      name: g.name,
      ...(opts.stored ? { finalizers: ["writ.dev/revoke"], annotations: { "writ.dev/record-id": g.delegationId } } : {}),
    },
    spec: delegationSpecOf(g.delegation as unknown as Record<string, unknown>),
  };
}

/**
 * Records `obj` (a created resource, with its uid) as the owner of `kind` `id`, as the
 * controller does when it stores a record through a resource (src/store/record-owners.ts): the
 * data plane's watch marks a resource's revocation only for the record's owner.
 */
export async function claimAsOwner(
  pool: Pool,
  kind: "delegation" | "agreement",
  id: string,
  obj: { metadata: { namespace?: string; name: string; uid?: string } },
): Promise<void> {
  const namespace = obj.metadata.namespace ?? "";
  const uid = ownerIdentity(kind === "delegation" ? "Delegation" : "IntentAgreement", namespace, obj.metadata.name);
  // Owners are kept with the record's organization (an id names a record within one).
  const { rows } = await pool.query<{ org_id: string | null }>(
    kind === "delegation" ? "SELECT org_id FROM delegations WHERE delegation_id = $1" : "SELECT org_id FROM agreements WHERE agreement_id = $1",
    [id],
  );
  await claimRecord(pool, kind, id, { namespace, name: obj.metadata.name, uid }, rows[0]?.org_id ?? null);
}

/** The IntentAgreement resource declaring `g`'s agreement, bound to its Delegation. */
export function agreementResource(g: Grant): Record<string, unknown> {
  return {
    apiVersion: "writ.dev/v1alpha1",
    kind: "IntentAgreement",
    metadata: { name: `${g.name}-agreement` },
    spec: agreementSpecOf(g.agreement as unknown as Record<string, unknown>, g.name),
  };
}

/** A verify request of `g`'s agent: a 0.01 USD purchase (ALLOW until the grant is revoked). */
export function verifyBody(g: Grant): Record<string, unknown> {
  return {
    agent_id: g.agentId,
    agreement_id: g.agreementId,
    action: {
      action_id: `act_${randomBytes(8).toString("hex")}`,
      action_type: "purchase",
      amount: 0.01,
      currency: "USD",
      proposed_at: new Date().toISOString(),
    },
  };
}

/** The answer of one verify. */
export interface VerifyAnswer {
  status: number;
  verdict?: string;
  reasons?: string[];
  messages?: { code: string; message: string }[];
}

/** POSTs one verify of `g` to `url` with `key`. */
export async function verifyOnce(url: string, key: string, g: Grant): Promise<VerifyAnswer> {
  const r = await fetch(`${url}/v1/verify`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(verifyBody(g)),
  });
  const body = (await r.json()) as Omit<VerifyAnswer, "status">;
  return { status: r.status, ...body };
}
