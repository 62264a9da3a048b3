/**
 * Grants for tests of delegation chains over real HTTP and Postgres (a verify world,
 * ./verify-world.ts): a new agent with a delegation of a given scope and one agreement bound
 * to it, the stored record, and a payment of the agent.
 */
import type { IntentAgreement } from "../../src/core/agreement/index.js";
import type { Delegation, Scope } from "../../src/core/delegation/index.js";
import { loadDelegation } from "../../src/store/delegations.js";
import { recordAllowedSpend } from "../../src/store/ledger/index.js";
import { action, mandate, storeAgreement, uid, type VerifyWorld } from "./verify-world.js";

/** A stored grant: its agent, its agreement (intent `i1`) and its delegation. */
export interface Grant {
  agentId: string;
  agreementId: string;
  delegationId: string;
  /** The delegation as stored. */
  record: Delegation;
  /** The agreement as stored. */
  agreement: IntentAgreement;
}

/** The stored record of delegation `id` of `agentId`. */
export async function storedDelegation(w: VerifyWorld, id: string, agentId?: string): Promise<Delegation> {
  const d = await loadDelegation(w.db.pool, id, agentId);
  if (!d) throw new Error(`delegation ${id} is not stored`);
  return d.record;
}

/** Options of `newGrant`: the intent's per-action and cumulative maximum, the record's other members, its id, its organization. */
export interface GrantOptions {
  maximum: number;
  cumulative: number;
  over?: Partial<Delegation>;
  id?: string;
  orgId?: string;
}

/** A new agent with a delegation of `scope` (and `o.over`) and one agreement bound to it, stored through the store (which takes any chain). */
export async function newGrant(w: VerifyWorld, scope: Partial<Scope>, o: GrantOptions): Promise<Grant> {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const s = await storeAgreement(w, {
    mandates: [mandate(agent_id, "i1", { maximum_amount: o.maximum, cumulative_maximum: o.cumulative })],
    delegation: { scope, ...(o.over !== undefined ? { over: o.over } : {}), ...(o.id !== undefined ? { id: o.id } : {}) },
    ...(o.orgId !== undefined ? { orgId: o.orgId } : {}),
  });
  const delegationId = s.delegationId as string;
  return { agentId: agent_id, agreementId: s.agreementId, delegationId, record: await storedDelegation(w, delegationId, agent_id), agreement: s.agreement };
}

/** A verify of a payment of `amount` by `g`'s agent under its agreement. */
export const payGrant = (w: VerifyWorld, g: Grant, amount: number) =>
  w.verify({ agent_id: g.agentId, agreement_id: g.agreementId, action: action({ amount }) });

/**
 * A spend of `minor` USD cents by `g`'s agent under its agreement, recorded through the store
 * alone (no evaluation, no declared limits): what the spend transaction counts by itself.
 */
export async function recordBareSpend(pool: Parameters<typeof recordAllowedSpend>[0], g: Pick<Grant, "agentId" | "agreementId">, minor: bigint): Promise<void> {
  const r = await recordAllowedSpend(pool, {
    agreementId: g.agreementId,
    agentId: g.agentId,
    intentId: "i1",
    actionId: uid("act"),
    amountMinor: minor,
    currency: "USD",
    at: new Date().toISOString(),
  });
  if (!("recorded" in r) || !r.recorded)
    throw new Error(`the spend was not recorded: ${JSON.stringify(r, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`);
}
