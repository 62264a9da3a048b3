/**
 * One bench grant, stored as the controller would store it: a registered agent (a fresh key),
 * a signed agreement whose intent `i1` allows at most `ceiling` USD per payment for a day (from
 * an hour ago), and the delegation that binds it, written through the store's repository
 * functions. Shared by the seeders of `npm run bench:verify` (./verify/seed.ts), of the
 * revocation-propagation runs (./propagation/world.ts) and of the chain bench (./citus-chain.ts).
 */
import { buildSignedAgreement, type IntentAgreement } from "../../src/core/agreement/index.js";
import type { Delegation } from "../../src/core/delegation/index.js";
import { generateSigner, keyId, type Signer } from "../../src/core/jose/index.js";
import { insertAgent } from "../../src/store/agents.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import type { Pool } from "pg";
import { withTransaction } from "../../src/store/pool.js";

const HOUR = 3600_000;

/** What `storeGrant` stores. */
export interface GrantSpec {
  orgId: string;
  agentId: string;
  agreementId: string;
  delegationId: string;
  /** The principal who signs: its id (`biz_…`) and key; the agent is registered under `prn_<…>`. */
  principal: { id: string; key: Signer; agentPrincipalId: string };
  purpose: string;
  /** Per-payment ceiling of intent `i1`, USD (default 100). */
  ceiling?: number;
  /** Cumulative maximum of intent `i1`, USD. */
  cumulative: number;
  /** More members of intent `i1` (limits per period). */
  mandate?: Record<string, unknown>;
  /** The delegation's scope beyond `currency: "USD"`. */
  scope?: Record<string, unknown>;
  /** Links above the delegation (default none). */
  chain?: Delegation["delegation_chain"];
  /** The instant the grant is made at (default now). */
  now?: number;
}

/** A stored grant: the delegation record (without its agreement) and the agreement. */
export interface StoredGrant {
  delegation: Delegation;
  agreement: IntentAgreement;
}

/** Stores the agent, agreement and delegation of `g` (see the module comment); throws when the agent's id or key is taken. */
export async function storeGrant(pool: Pool, g: GrantSpec): Promise<StoredGrant> {
  const now = g.now ?? Date.now();
  const publicKey = generateSigner().publicJwk;
  const r = await insertAgent(
    pool,
    {
      agent_id: g.agentId,
      org_id: g.orgId,
      principal_id: g.principal.agentPrincipalId,
      verification_level: "operator_verified",
      public_key: publicKey,
      fingerprint: keyId(publicKey),
    },
    new Date(now),
  );
  if (!r.ok) throw new Error(`agent ${g.agentId}: its ${r.conflict} is taken`);
  const principal = { type: "business" as const, id: g.principal.id };
  const agreement = await buildSignedAgreement(
    {
      agreement_id: g.agreementId,
      mandates: [
        {
          intent_id: "i1",
          principal: { ...principal },
          agent: { agent_id: g.agentId },
          currency: "USD",
          maximum_amount: g.ceiling ?? 100,
          cumulative_maximum: g.cumulative,
          expires_at: new Date(now + 24 * HOUR).toISOString(),
          ...g.mandate,
        },
      ],
      at: new Date(now - HOUR).toISOString(),
    },
    g.principal.key,
  );
  const delegation: Delegation = {
    delegation_id: g.delegationId,
    principal: { ...principal, public_key: g.principal.key.publicJwk },
    agent: { agent_id: g.agentId },
    granted_at: new Date(now - HOUR).toISOString(),
    expires_at: new Date(now + 24 * HOUR).toISOString(),
    purpose: g.purpose,
    scope: { currency: "USD", ...g.scope },
    conditions: [],
    revocable: true,
    delegation_chain: g.chain ?? [],
    status: "active",
  };
  await withTransaction(pool, (c) => upsertDelegation(c, { ...delegation, intent_agreement: agreement }, { orgId: g.orgId }));
  return { delegation, agreement };
}
