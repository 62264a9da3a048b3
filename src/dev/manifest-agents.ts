/**
 * `writ dev` only: registers the agents its Delegation manifests name, so the samples (whose
 * agents exist nowhere else) reconcile to Ready. For each Delegation's `spec.agent` that is not
 * registered yet and carries a usable `public_key`, an active agent of the dev organization is
 * inserted (principal `prn_dev`, self-declared) with its `registration` log entry, in one
 * transaction, as the registry does. Agents already registered (to any organization) are left
 * alone: one registered elsewhere makes the controller refuse the Delegation
 * (NAMESPACE_NOT_BOUND), as on a cluster. `writ controller` never registers agents.
 */
import type { Pool } from "pg";
import { keyId, parsePublicJwk, type Signer } from "../core/jose/index.js";
import type { ManifestObject } from "../sources/local/index.js";
import { getAgent, insertAgent, registrationLogEntry, appendLogEntries, type LogAppendOptions, withTransaction } from "../store/index.js";

/** The pseudonymous principal the dev agents are registered with. */
export const DEV_PRINCIPAL_ID = "prn_dev";

/** Options of `registerManifestAgents`. */
export interface ManifestAgentOptions {
  orgId: string;
  signer: Signer;
  logOptions: LogAppendOptions;
  now: Date;
}

/** Registers the unregistered agents of `objects`' Delegations; one line per agent registered or not registrable. */
export async function registerManifestAgents(pool: Pool, objects: readonly ManifestObject[], opts: ManifestAgentOptions): Promise<string[]> {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    if (o.object.kind !== "Delegation") continue;
    const agent = (o.object.spec as { agent?: { agent_id?: unknown; public_key?: unknown } } | undefined)?.agent;
    const agentId = agent?.agent_id;
    if (typeof agentId !== "string" || seen.has(agentId)) continue;
    seen.add(agentId);
    if (await getAgent(pool, agentId)) continue;
    let publicKey;
    try {
      publicKey = parsePublicJwk(agent?.public_key);
    } catch (err) {
      lines.push(
        `agent ${agentId} (${o.file}) not registered: spec.agent.public_key is ${agent?.public_key === undefined ? "absent" : `unusable (${err instanceof Error ? err.message : String(err)})`}`,
      );
      continue;
    }
    const outcome = await withTransaction(pool, async (c) => {
      const r = await insertAgent(
        c,
        {
          agent_id: agentId,
          org_id: opts.orgId,
          principal_id: DEV_PRINCIPAL_ID,
          verification_level: "self_declared",
          public_key: publicKey,
          fingerprint: keyId(publicKey),
        },
        opts.now,
      );
      if (r.ok) await appendLogEntries(c, [registrationLogEntry(r.agent)], opts.signer, opts.logOptions);
      return r;
    });
    lines.push(
      outcome.ok
        ? `agent ${agentId} registered to ${opts.orgId} (dev only: named by ${o.file})`
        : `agent ${agentId} not registered: its ${outcome.conflict} is taken`,
    );
  }
  return lines;
}
