/**
 * Seeding the public demo data into a live registry through the same repository functions as
 * the API: three organizations (`createOrg`) with their deterministic public keys
 * (`issueKey`; the payment-side ones also their public acknowledgement keys, `insertAckKey`), the demo agent (`insertAgent` with its `registration` log entry), and the
 * demo delegation with its agreement (`upsertDelegation`), in ONE transaction
 * (src/core/demo/seed.ts, docs/demo.md); and the demo principal's PUBLIC portal address
 * `demo@writ.dev` as `prn_demo` (a sign-in link for it signs in as the demo agent's principal).
 * Used by `POST /v1/admin/seed-demo` and `writ dev`.
 *
 * Promise: idempotent. When the demo agent is registered, nothing is inserted and the answer
 * says `already_present: true`; two concurrent seeds insert once (the loser collides on the
 * key tokens or the agent and answers `already_present: true`). The keys are the same public
 * tokens either way.
 */
import type { Pool } from "pg";
import {
  DEMO_AGENT_ID,
  DEMO_AGREEMENT_ID,
  demoAgentSigner,
  acknowledgedByDemoParties,
  demoAckSigner,
  DEMO_PRINCIPAL_EMAIL,
  DEMO_SEED_ORGS,
  DEMO_SEED_PRINCIPAL_ID,
  demoKeyBytes,
  demoKeyToken,
  seededDemoDelegation,
  type DemoSeedOrg,
} from "../../../core/demo/index.js";
import { keyId, type Signer } from "../../../core/jose/index.js";
import { defaultScopes } from "../../../core/registry/index.js";
import {
  insertAckKey,
  getAgent,
  insertAgent,
  registrationLogEntry,
  upsertDelegation,
  findKeyByToken,
  issueKey,
  appendLogEntries,
  type LogAppendOptions,
  createOrg,
  registerPrincipalEmail,
  withTransaction,
} from "../../../store/index.js";

/** The answer of a seeding. */
export interface SeedDemoResult {
  operator_key: string;
  wallet_key: string;
  merchant_key: string;
  agent_id: string;
  agreement_id: string;
  already_present: boolean;
}

/** Options of `seedDemo`. */
export interface SeedDemoOptions {
  now: Date;
  /** Signs the agent's registration log entry. */
  signer: Signer;
  logOptions?: LogAppendOptions;
}

class AlreadyPresent extends Error {}

function keyOf(role: DemoSeedOrg["role"]): string {
  const org = DEMO_SEED_ORGS.find((o) => o.role === role);
  if (!org) throw new TypeError(`no demo organization ${role}`);
  return demoKeyToken(org.keyLabel);
}

/** Seeds the demo data (see the module comment). */
export async function seedDemo(pool: Pool, opts: SeedDemoOptions): Promise<SeedDemoResult> {
  const answer = {
    operator_key: keyOf("operator"),
    wallet_key: keyOf("wallet"),
    merchant_key: keyOf("merchant"),
    agent_id: DEMO_AGENT_ID,
    agreement_id: DEMO_AGREEMENT_ID,
  };
  // The demo principal's public portal address: registered on every seeding (also in a
  // registry seeded before the portal knew it); never moves an address another principal holds.
  await registerPrincipalEmail(pool, DEMO_SEED_PRINCIPAL_ID, DEMO_PRINCIPAL_EMAIL);
  if (await getAgent(pool, DEMO_AGENT_ID)) {
    // A registry seeded before acknowledgement keys existed: register them now (idempotent).
    for (const o of DEMO_SEED_ORGS) {
      const found = o.ackRole ? await findKeyByToken(pool, demoKeyToken(o.keyLabel)) : undefined;
      if (!found) continue;
      const ackKey = demoAckSigner(o.role).publicJwk;
      await insertAckKey(pool, { orgId: found.org_id, thumbprint: keyId(ackKey), publicKey: ackKey }, opts.now);
    }
    return { ...answer, already_present: true };
  }
  const delegation = await seededDemoDelegation(opts.now.getTime());
  try {
    await withTransaction(pool, async (client) => {
      const orgIds = new Map<DemoSeedOrg["role"], string>();
      for (const o of DEMO_SEED_ORGS) {
        const org = await createOrg(client, { name: o.name, org_type: o.org_type }, opts.now);
        await issueKey(client, { org_id: org.org_id, name: "public demo key", scopes: defaultScopes(o.org_type) }, opts.now, {
          tokenBytes: demoKeyBytes(o.keyLabel),
        });
        orgIds.set(o.role, org.org_id);
        if (o.ackRole) {
          const ackKey = demoAckSigner(o.role).publicJwk;
          await insertAckKey(client, { orgId: org.org_id, thumbprint: keyId(ackKey), publicKey: ackKey }, opts.now);
        }
      }
      const operator = orgIds.get("operator") as string;
      const publicKey = demoAgentSigner().publicJwk;
      const inserted = await insertAgent(
        client,
        {
          agent_id: DEMO_AGENT_ID,
          org_id: operator,
          principal_id: DEMO_SEED_PRINCIPAL_ID,
          verification_level: "self_declared",
          public_key: publicKey,
          fingerprint: keyId(publicKey),
        },
        opts.now,
      );
      if (!inserted.ok) throw new AlreadyPresent();
      await appendLogEntries(client, [registrationLogEntry(inserted.agent)], opts.signer, opts.logOptions ?? { now: opts.now });
      const agreement = await acknowledgedByDemoParties(delegation.intent_agreement, orgIds, opts.now.getTime());
      await upsertDelegation(client, { ...delegation, intent_agreement: agreement }, { orgId: operator, at: opts.now });
    });
    return { ...answer, already_present: false };
  } catch (e) {
    // A concurrent seeding committed first: its key tokens (unique) or agent collide with ours.
    if (e instanceof AlreadyPresent || (e as { code?: unknown }).code === "23505") return { ...answer, already_present: true };
    throw e;
  }
}
