/**
 * Proofs of possession of a key being registered: the OPTIONAL `key_proof` of
 * `POST /v1/agents` (an agent key) and of `POST /v1/orgs/{org_id}/issuer-keys` (an issuer key),
 * docs/registry.md.
 *
 * A proof is a signed record whose `signature` is a flattened JWS over JCS of the record without
 * `signature`, made with the private half of the key being registered:
 * - agent key: `{svc_agent_pop: 1, org_id, agent_id, fingerprint, at}`, `typ` `svc-agent-pop+jws`;
 * - issuer key: `{svc_issuer_key_pop: 1, org_id, thumbprint, at}`, `typ` `svc-issuer-key-pop+jws`.
 * It binds the registering organization and the key's RFC 7638 id (and the agent id), so it
 * cannot be replayed by another organization, for another agent id or for another key; `at`
 * must lie within AGENT_POP_SKEW_MS of the service clock, so an old proof cannot be replayed
 * later. Pure; the checks never throw.
 */
import { type HashString } from "../canonical/index.js";
import { JoseError, signRecord, unsignedPart, verifySignedRecord, type JwsObject, type PublicJwk, type Signer } from "../jose/index.js";

/** The protected-header `typ` of an agent key proof. */
export const AGENT_POP_TYP = "svc-agent-pop+jws";
/** The protected-header `typ` of an issuer key proof. */
export const ISSUER_KEY_POP_TYP = "svc-issuer-key-pop+jws";
/** How far a proof's `at` may be from the service clock, either way (ms). */
export const AGENT_POP_SKEW_MS = 5 * 60_000;

/** What an agent key proof states. */
export interface AgentPopFields {
  org_id: string;
  agent_id: string;
  fingerprint: HashString;
  at: string;
}

/** An agent key proof as sent. */
export interface AgentPop extends AgentPopFields {
  svc_agent_pop: 1;
  signature: JwsObject;
}

/** What an issuer key proof states. */
export interface IssuerKeyPopFields {
  org_id: string;
  thumbprint: HashString;
  at: string;
}

/** An issuer key proof as sent. */
export interface IssuerKeyPop extends IssuerKeyPopFields {
  svc_issuer_key_pop: 1;
  signature: JwsObject;
}

/** Signs an agent key proof for `fields` with `signer`, the agent key being registered. */
export async function signAgentPop(fields: AgentPopFields, signer: Signer): Promise<AgentPop> {
  const body = { svc_agent_pop: 1 as const, org_id: fields.org_id, agent_id: fields.agent_id, fingerprint: fields.fingerprint, at: fields.at };
  return { ...body, signature: await signRecord(body, signer, AGENT_POP_TYP) };
}

/** Signs an issuer key proof for `fields` with `signer`, the issuer key being registered. */
export async function signIssuerKeyPop(fields: IssuerKeyPopFields, signer: Signer): Promise<IssuerKeyPop> {
  const body = { svc_issuer_key_pop: 1 as const, org_id: fields.org_id, thumbprint: fields.thumbprint, at: fields.at };
  return { ...body, signature: await signRecord(body, signer, ISSUER_KEY_POP_TYP) };
}

/** What an agent key proof must match: the registration it comes with and the service clock. */
export interface AgentPopExpectation {
  orgId: string;
  agentId: string;
  publicKey: PublicJwk;
  fingerprint: HashString;
  nowMs: number;
}

/** The outcome of a check: ok, or what is wrong. */
export type PopCheck = { ok: true } | { ok: false; problem: string };

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Checks a proof: its members are exactly `marker`, `bound`'s, `at` and `signature`, with these values. */
async function checkProof(
  proof: unknown,
  want: { typ: string; marker: string; bound: ReadonlyArray<[name: string, value: string, mismatch: string]>; publicKey: PublicJwk; nowMs: number },
): Promise<PopCheck> {
  const no = (problem: string) => ({ ok: false as const, problem });
  if (typeof proof !== "object" || proof === null || Array.isArray(proof)) return no("must be an object");
  const p = proof as Record<string, unknown>;
  const members = new Set([want.marker, ...want.bound.map(([n]) => n), "at", "signature"]);
  const extra = Object.keys(p).find((k) => !members.has(k));
  if (extra !== undefined) return no(`unknown member ${JSON.stringify(extra)}`);
  if (p[want.marker] !== 1) return no(`${want.marker} must be 1`);
  for (const [name, value, mismatch] of want.bound) if (p[name] !== value) return no(`${name} ${mismatch}`);
  const at = typeof p.at === "string" && INSTANT.test(p.at) ? Date.parse(p.at) : Number.NaN;
  if (!Number.isFinite(at)) return no("at must be an RFC 3339 date-time");
  if (Math.abs(at - want.nowMs) > AGENT_POP_SKEW_MS) return no(`at is more than ${AGENT_POP_SKEW_MS / 60_000} minutes from the service clock`);
  try {
    await verifySignedRecord(p.signature, [want.publicKey], { typ: want.typ, record: unsignedPart(p) });
  } catch (e) {
    if (e instanceof JoseError) return no(`signature: ${e.message}`);
    return no("signature does not verify with public_key");
  }
  return { ok: true };
}

/** `{ok: true}` when `proof` proves possession of the agent key of the registration, else why not. */
export function checkAgentPop(proof: unknown, want: AgentPopExpectation): Promise<PopCheck> {
  return checkProof(proof, {
    typ: AGENT_POP_TYP,
    marker: "svc_agent_pop",
    bound: [
      ["org_id", want.orgId, "is not the registering organization"],
      ["agent_id", want.agentId, "is not the agent being registered"],
      ["fingerprint", want.fingerprint, "is not the RFC 7638 id of public_key"],
    ],
    publicKey: want.publicKey,
    nowMs: want.nowMs,
  });
}

/** `{ok: true}` when `proof` proves possession of the issuer key registered by `orgId`, else why not. */
export function checkIssuerKeyPop(proof: unknown, want: { orgId: string; publicKey: PublicJwk; thumbprint: HashString; nowMs: number }): Promise<PopCheck> {
  return checkProof(proof, {
    typ: ISSUER_KEY_POP_TYP,
    marker: "svc_issuer_key_pop",
    bound: [
      ["org_id", want.orgId, "is not the registering organization"],
      ["thumbprint", want.thumbprint, "is not the RFC 7638 id of public_key"],
    ],
    publicKey: want.publicKey,
    nowMs: want.nowMs,
  });
}
