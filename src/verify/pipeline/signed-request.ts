/**
 * `POST /v1/agents/verify-request` without HTTP: who signed an HTTP request (RFC 9421, Web Bot
 * Auth: src/core/httpsig), whether the signature is good and fresh, and, for a payment the
 * caller names, whether the agent holds a live grant that could pay it now (./grant-probe.ts,
 * which spends nothing).
 *
 * Order, each refusal with its reason code: the signature (src/core/httpsig/verify.ts: MISSING,
 * MALFORMED, EXPIRED, KEY_UNKNOWN, INVALID; its keyid is looked up among registered agents'
 * keys that are not displaced); the nonce, claimed in Postgres for the signature's lifetime
 * plus the clock skew (REQUEST_NONCE_REPLAYED: shared by every data-plane process); the agent's
 * status read from Postgres at that moment (AGENT_NOT_ACTIVE: a suspension after signing
 * refuses the request at once). A verified request also answers the agent's trust score.
 */
import type { Pool } from "pg";
import type { ReasonCode } from "../../core/evaluate/index.js";
import { CLOCK_SKEW_SECONDS, checkSignature, fingerprintOfKeyId, type HttpRequestLike, type SignatureFacts } from "../../core/httpsig/index.js";
import { type AgentRecord, agentStanding, agentByFingerprint, claimNonce } from "../../store/index.js";
import { probeGrant, type GrantProbe, type ProbeDeps, type ProbePayment } from "./grant-probe.js";

/** Who the signing agent is, as answered. */
export interface SignedRequestAgent {
  agent_id: string;
  operator_org_id: string;
  status: string;
  verification_level: string;
  fingerprint: string;
  trust_score: number;
}

/** What a check reads with: the pool (agents, nonces, standing) and what a grant probe reads with. */
export interface SignedRequestDeps extends ProbeDeps {
  pool: Pool;
}

/** The answer of a check. */
export interface SignedRequestAnswer {
  verified: boolean;
  /** Why not (absent when verified). */
  reason?: ReasonCode;
  message?: string;
  keyid?: string;
  signature?: Omit<SignatureFacts, "created" | "expires"> & { created: string; expires: string };
  agent?: SignedRequestAgent;
  /** Only for a verified request that names a payment. */
  grant?: GrantProbe;
}

function factsView(f: SignatureFacts): NonNullable<SignedRequestAnswer["signature"]> {
  return { ...f, created: new Date(f.created * 1000).toISOString(), expires: new Date(f.expires * 1000).toISOString() };
}

async function agentView(deps: SignedRequestDeps, a: AgentRecord): Promise<SignedRequestAgent> {
  const trust_score = (await agentStanding(deps.pool, a, deps.now)).trust_score.score;
  return {
    agent_id: a.agent_id,
    operator_org_id: a.org_id,
    status: a.status,
    verification_level: a.verification_level,
    fingerprint: a.fingerprint,
    trust_score,
  };
}

/** Checks `request` (see the module comment); `payment` asks the grant question too. */
export async function checkSignedRequest(deps: SignedRequestDeps, request: HttpRequestLike, payment?: ProbePayment): Promise<SignedRequestAnswer> {
  const check = await checkSignature(
    { request },
    {
      keyFor: async (keyid) => {
        const fp = fingerprintOfKeyId(keyid);
        return fp === undefined ? undefined : agentByFingerprint(deps.pool, fp);
      },
      jwkOf: (a) => a.public_key,
      nowMs: deps.now.getTime(),
    },
  );
  if (!check.ok) {
    return {
      verified: false,
      reason: check.code,
      message: check.message,
      ...(check.facts ? { keyid: check.facts.keyid, signature: factsView(check.facts) } : {}),
    };
  }
  const { facts, key: agent } = check;
  const base = { keyid: facts.keyid, signature: factsView(facts) };
  const keepUntil = new Date((facts.expires + CLOCK_SKEW_SECONDS) * 1000);
  if (!(await claimNonce(deps.pool, facts.keyid, facts.nonce, keepUntil, deps.now))) {
    return {
      verified: false,
      reason: "REQUEST_NONCE_REPLAYED",
      message: `nonce of signature ${facts.label} was already presented for key ${facts.keyid}: the request is a replay`,
      ...base,
      agent: await agentView(deps, agent),
    };
  }
  if (agent.status !== "active") {
    return {
      verified: false,
      reason: "AGENT_NOT_ACTIVE",
      message: `agent ${agent.agent_id} is ${agent.status}, not active, in the registry`,
      ...base,
      agent: await agentView(deps, agent),
    };
  }
  const out: SignedRequestAnswer = { verified: true, ...base, agent: await agentView(deps, agent) };
  if (payment !== undefined) out.grant = await probeGrant(deps, agent.agent_id, agent.org_id, payment);
  return out;
}
