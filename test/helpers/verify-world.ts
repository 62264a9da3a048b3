/**
 * Shared set-up of the verify integration tests (verify*.test.ts, delegation-revoke*.test.ts):
 * a registry world with an operator organization (key with `verify` and `agents:write`), a
 * registered agent, and helpers that store signed delegations and agreements through the
 * store's repository functions, then call the API over real HTTP.
 */
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import {
  buildSignedAgreement,
  mandateHash,
  signAcknowledgement,
  type IntentAgreement,
  type Mandate,
  type ParentLimits,
} from "../../src/core/agreement/index.js";
import type { Delegation, Scope } from "../../src/core/delegation/index.js";
import { signerFromSeed, type Signer } from "../../src/core/jose/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { withTransaction } from "../../src/store/pool.js";
import type { AppDeps } from "../../src/api/app.js";
import { PRINCIPAL, principalKey } from "../fixtures/records.js";
import { startRegistryWorld, type Answer, type RegistryWorld } from "./registry-client.js";

export const HOUR = 3600_000;
export const iso = (ms: number) => new Date(ms).toISOString();

/** A verify test world. */
export interface VerifyWorld extends RegistryWorld {
  operatorOrg: string;
  /** Operator key (default scopes: keys:write, agents:write, registry:read, verify). */
  operatorKey: string;
  agentId: string;
  verify(body: unknown, token?: string | null): Promise<Answer>;
  /** A payment provider (processor_psp, key with its default scopes, outcomes:write among them) that every stored agreement names as a party unless told otherwise. */
  psp: PaymentParty;
  /** POST /v1/verify/outcomes with `token` (default the world's payment provider's key). */
  outcome(body: unknown, token?: string | null): Promise<Answer>;
}

/** A payment-side organization that countersigns agreements. */
export interface PaymentParty {
  orgId: string;
  key: string;
  signer: Signer;
  role: "psp" | "merchant" | "issuer";
}

/** A registry world plus an operator, its key and one registered agent. */
export async function startVerifyWorld(env: Record<string, string> = {}, deps: Omit<AppDeps, "pool"> = {}): Promise<VerifyWorld> {
  const world = await startRegistryWorld(env, deps);
  const operatorOrg = await world.createOrg("agent_operator");
  const { token } = await world.issueKey(operatorOrg);
  const { agent_id } = await world.registerAgent(token);
  const psp = await paymentParty(world, "processor_psp", "psp", signerFromSeed(randomBytes(32).toString("hex")));
  return {
    ...world,
    operatorOrg,
    operatorKey: token,
    agentId: agent_id,
    verify: (body, t) => world.call("POST", "/v1/verify", t === undefined ? token : t, body),
    psp,
    outcome: (body, t) => world.call("POST", "/v1/verify/outcomes", t === undefined ? psp.key : t, body),
  };
}

/**
 * A new payment-side organization with a key (its default scopes) that registered `signer`'s
 * public key as its acknowledgement key (POST /v1/orgs/{org_id}/ack-keys), so its
 * acknowledgements name it as a party.
 */
export async function paymentParty(
  world: RegistryWorld,
  orgType: "merchant" | "bank_issuer" | "wallet" | "processor_psp",
  role: PaymentParty["role"],
  signer: Signer = signerFromSeed(randomBytes(32).toString("hex")),
): Promise<PaymentParty> {
  const orgId = await world.createOrg(orgType);
  const key = (await world.issueKey(orgId)).token;
  await registerAckKey(world, orgId, signer);
  return { orgId, key, signer, role };
}

/** Registers `signer`'s public key as an acknowledgement key of `orgId` (with the admin token). */
export async function registerAckKey(world: RegistryWorld, orgId: string, signer: Signer): Promise<void> {
  const r = await world.call("POST", `/v1/orgs/${orgId}/ack-keys`, world.admin, { public_key: signer.publicJwk });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/** A fresh id with `prefix`. */
export function uid(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

/** An unsigned mandate for `agentId` (USD, ceiling 100, expiring in a day). */
export function mandate(agentId: string, intentId: string, over: Partial<Mandate> = {}): Mandate {
  return {
    intent_id: intentId,
    principal: { ...PRINCIPAL },
    agent: { agent_id: agentId },
    currency: "USD",
    maximum_amount: 100,
    expires_at: iso(Date.now() + 24 * HOUR),
    ...over,
  };
}

/** Options of `storeAgreement`. */
export interface StoreOptions {
  agreementId?: string;
  mandates: Mandate[];
  parentLimits?: ParentLimits;
  /** Store under a delegation (default) or bare (`false`). */
  delegation?: false | { id?: string; scope?: Partial<Scope>; over?: Partial<Delegation> };
  orgId?: string | null;
  signer?: Signer;
  /** Time of signing (default an hour ago). */
  at?: number;
  /** Changes the signed agreement before it is stored (e.g. adds acknowledgements). */
  transform?: (a: IntentAgreement) => IntentAgreement | Promise<IntentAgreement>;
  /** Payment-side parties that acknowledge every mandate (default: the world's payment provider). */
  parties?: PaymentParty[];
}

/** `a` with an acknowledgement of each of its mandates by each party (`id` the party's org id). */
export async function acknowledgedBy(a: IntentAgreement, parties: readonly PaymentParty[], at: string): Promise<IntentAgreement> {
  const acks = [];
  for (const p of parties) {
    for (const m of a.mandates) {
      acks.push(await signAcknowledgement({ agreement_id: a.agreement_id, mandate_hash: mandateHash(m), role: p.role, id: p.orgId, at }, p.signer));
    }
  }
  return acks.length === 0 ? a : { ...a, acknowledgements: [...(a.acknowledgements ?? []), ...acks] };
}

/** A delegation record of the fixtures' principal (key `signer`, default `principalKey`) to `agentId`: granted at `at`, expiring in a day, no conditions, no chain. */
export function delegationRecord(
  delegationId: string,
  agentId: string,
  o: { at: number; scope: Partial<Scope>; chain?: Delegation["delegation_chain"]; signer?: Signer },
): Delegation {
  return {
    delegation_id: delegationId,
    principal: { ...PRINCIPAL, public_key: (o.signer ?? principalKey).publicJwk },
    agent: { agent_id: agentId },
    granted_at: iso(o.at),
    expires_at: iso(Date.now() + 24 * HOUR),
    purpose: "test purchases",
    scope: { currency: "USD", ...o.scope },
    conditions: [],
    revocable: true,
    delegation_chain: o.chain ?? [],
    status: "active",
  };
}

/** Signs and stores an agreement (bound to a new delegation unless `delegation: false`). */
export async function storeAgreement(
  w: VerifyWorld,
  o: StoreOptions,
): Promise<{ agreement: IntentAgreement; agreementId: string; delegationId: string | null }> {
  const at = o.at ?? Date.now() - HOUR;
  const agreementId = o.agreementId ?? uid("agr");
  const signed = await buildSignedAgreement(
    { agreement_id: agreementId, mandates: o.mandates, ...(o.parentLimits ? { parent_limits: o.parentLimits } : {}), at: iso(at) },
    o.signer ?? principalKey,
  );
  const acknowledged = await acknowledgedBy(signed, o.parties ?? [w.psp], iso(at));
  const agreement = o.transform ? await o.transform(acknowledged) : acknowledged;
  const orgId = o.orgId === undefined ? w.operatorOrg : o.orgId;
  if (o.delegation === false) {
    await withTransaction(w.db.pool, (c) => upsertAgreement(c, agreement, { orgId, agentId: o.mandates[0]?.agent.agent_id ?? w.agentId }));
    return { agreement, agreementId, delegationId: null };
  }
  const d = o.delegation ?? {};
  const delegationId = d.id ?? uid("del");
  const delegation: Delegation = {
    ...delegationRecord(delegationId, o.mandates[0]?.agent.agent_id ?? w.agentId, { at, scope: d.scope ?? {}, ...(o.signer ? { signer: o.signer } : {}) }),
    ...d.over,
    intent_agreement: agreement,
  };
  await withTransaction(w.db.pool, (c) => upsertDelegation(c, delegation, { orgId }));
  return { agreement, agreementId, delegationId };
}

/** A purchase action (10 USD, now) with a fresh id. */
export function action(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { action_id: uid("act"), action_type: "purchase", amount: 10, currency: "USD", proposed_at: iso(Date.now()), ...over };
}

/**
 * A new agent whose agreement (cumulative 20 USD) is spent to the limit by two ALLOWs of 10
 * (the third is refused CUMULATIVE_BUDGET_EXCEEDED, which this checks); returns the first
 * allowed action, whose `failed` outcome would free 10.
 */
export async function exhaustedBudget(w: VerifyWorld): Promise<{ agent_id: string; agreementId: string; first: Record<string, unknown> }> {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { cumulative_maximum: 20 })] });
  const first = action();
  expect((await w.verify({ agent_id, action: first })).body.verdict).toBe("ALLOW");
  expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
  expect((await w.verify({ agent_id, action: action() })).body.reasons).toEqual(["CUMULATIVE_BUDGET_EXCEEDED"]);
  return { agent_id, agreementId, first };
}

/** Waits (bounded) until a `writ serve` at `url` has migrated and loaded its revocation index: a verify of `agentId` answers ALLOW. */
export async function untilAllowing(url: string, agentId: string, token: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await fetch(`${url}/v1/verify`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ agent_id: agentId, action: action({ amount: 1 }) }),
    });
    const body = (await r.json()) as Record<string, unknown>;
    if (r.status === 200 && body.verdict === "ALLOW") return;
    if (Date.now() > deadline) throw new Error(`${url} does not allow: ${r.status} ${JSON.stringify(body)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
