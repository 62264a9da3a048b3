/**
 * Proof of possession of an agent key: the OPTIONAL `key_proof` of `POST /v1/agents`
 * (docs/registry.md, "Agents").
 *
 * A proof is a signed record `{svc_agent_pop: 1, org_id, agent_id, fingerprint, at, signature}`
 * whose `signature` is a flattened JWS (protected `typ` `svc-agent-pop+jws`) over JCS of the
 * record without `signature`, made with the private half of the key being registered. It binds
 * the registering organization, the agent id and the key's RFC 7638 fingerprint, so it cannot
 * be replayed by another organization, for another agent id or for another key; `at` must lie
 * within AGENT_POP_SKEW_MS of the service clock, so an old proof cannot be replayed later.
 * Pure; `checkAgentPop` never throws.
 */
import { type HashString } from "../canonical/index.js";
import { JoseError, signRecord, unsignedPart, verifySignedRecord, type JwsObject, type PublicJwk, type Signer } from "../jose/index.js";

/** The protected-header `typ` of a proof of possession. */
export const AGENT_POP_TYP = "svc-agent-pop+jws";
/** How far a proof's `at` may be from the service clock, either way (ms). */
export const AGENT_POP_SKEW_MS = 5 * 60_000;

/** What a proof states. */
export interface AgentPopFields {
  org_id: string;
  agent_id: string;
  fingerprint: HashString;
  at: string;
}

/** A proof of possession as sent. */
export interface AgentPop extends AgentPopFields {
  svc_agent_pop: 1;
  signature: JwsObject;
}

const MEMBERS = new Set(["svc_agent_pop", "org_id", "agent_id", "fingerprint", "at", "signature"]);
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Signs a proof for `fields` with `signer`, the agent key being registered. */
export async function signAgentPop(fields: AgentPopFields, signer: Signer): Promise<AgentPop> {
  const body = { svc_agent_pop: 1 as const, org_id: fields.org_id, agent_id: fields.agent_id, fingerprint: fields.fingerprint, at: fields.at };
  return { ...body, signature: await signRecord(body, signer, AGENT_POP_TYP) };
}

/** What a proof must match: the registration it comes with and the service clock. */
export interface AgentPopExpectation {
  orgId: string;
  agentId: string;
  publicKey: PublicJwk;
  fingerprint: HashString;
  nowMs: number;
}

/** `{ok: true}` when `proof` proves possession of the key of the registration, else why not. */
export async function checkAgentPop(proof: unknown, want: AgentPopExpectation): Promise<{ ok: true } | { ok: false; problem: string }> {
  const no = (problem: string) => ({ ok: false as const, problem });
  if (typeof proof !== "object" || proof === null || Array.isArray(proof)) return no("must be an object");
  const p = proof as Record<string, unknown>;
  const extra = Object.keys(p).find((k) => !MEMBERS.has(k));
  if (extra !== undefined) return no(`unknown member ${JSON.stringify(extra)}`);
  if (p.svc_agent_pop !== 1) return no("svc_agent_pop must be 1");
  if (p.org_id !== want.orgId) return no("org_id is not the registering organization");
  if (p.agent_id !== want.agentId) return no("agent_id is not the agent being registered");
  if (p.fingerprint !== want.fingerprint) return no("fingerprint is not the RFC 7638 id of public_key");
  const at = typeof p.at === "string" && INSTANT.test(p.at) ? Date.parse(p.at) : Number.NaN;
  if (!Number.isFinite(at)) return no("at must be an RFC 3339 date-time");
  if (Math.abs(at - want.nowMs) > AGENT_POP_SKEW_MS) return no(`at is more than ${AGENT_POP_SKEW_MS / 60_000} minutes from the service clock`);
  try {
    await verifySignedRecord(p.signature, [want.publicKey], { typ: AGENT_POP_TYP, record: unsignedPart(p) });
  } catch (e) {
    if (e instanceof JoseError) return no(`signature: ${e.message}`);
    return no("signature does not verify with public_key");
  }
  return { ok: true };
}
