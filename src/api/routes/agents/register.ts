/**
 * `POST /v1/agents` (scope agents:write, agent operators): registers an agent with its public
 * key, and appends a `registration` entry to the transparency log in the SAME transaction.
 *
 * Checks, in order: the credential (onRequest), the body schema (400), the log signing key
 * (503 when unset), the public key (400 unless an Ed25519 or P-256 public JWK without `d`),
 * the optional `key_proof` (400 unless it proves possession of the key for this organization
 * and agent id: src/core/registry/key-proof.ts), then the agent id is unused and the key is
 * not held by another live agent (409); a proven registration displaces an unproven holder of
 * the key instead (src/store/agents.ts). Answer 201 `{agent_id, status, verification_level,
 * fingerprint, score}`, plus `key_proven: true` and `displaced_agent_id` (when it displaced one)
 * for a proven key.
 */
import type { FastifyInstance } from "fastify";
import { JoseError, keyId, parsePublicJwk, type PublicJwk } from "../../../core/jose/index.js";
import {
  AGENT_ID_PATTERN,
  AGENT_POP_TYP,
  PRINCIPAL_ID_PATTERN,
  VERIFICATION_LEVELS,
  checkAgentPop,
  type VerificationLevel,
} from "../../../core/registry/index.js";
import { insertAgent, registrationLogEntry, agentStanding, appendLogEntries, withTransaction } from "../../../store/index.js";
import { keyCredential } from "../../plugins/auth.js";
import { ApiError, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { logAppendOptions, logSignerOf } from "../shared/registry-log.js";
import type { KeyDirectoryAnswers } from "./key-directory.js";

interface RegisterBody {
  agent_id: string;
  principal_id: string;
  verification_level: VerificationLevel;
  public_key: unknown;
  key_proof?: unknown;
}

function parseKey(input: unknown): PublicJwk {
  try {
    return parsePublicJwk(input);
  } catch (e) {
    if (e instanceof JoseError) throw new ApiError("PUBLIC_KEY_INVALID", `public_key: ${e.message}`);
    throw e;
  }
}

/** Registers `POST /v1/agents` on `app`. */
export function registerAgentRegistration(app: FastifyInstance, directory: Pick<KeyDirectoryAnswers, "clear">): void {
  app.post<{ Body: RegisterBody }>(
    "/v1/agents",
    {
      schema: {
        tags: ["registry"],
        summary: "Register an agent (agent operators, scope agents:write)",
        description:
          "public_key is an Ed25519 (OKP) or P-256 (EC) public JWK; fingerprint is its sha256: RFC 7638 thumbprint. " +
          "The registration is appended to the transparency log (kind registration; the principal_id is never logged).",
        body: {
          type: "object",
          required: ["agent_id", "principal_id", "verification_level", "public_key"],
          properties: {
            agent_id: { type: "string", pattern: AGENT_ID_PATTERN },
            principal_id: { type: "string", pattern: PRINCIPAL_ID_PATTERN, description: "Pseudonymous principal id (prn_...)" },
            verification_level: { type: "string", enum: [...VERIFICATION_LEVELS] },
            public_key: { type: "object", description: "Public JWK (Ed25519 or P-256), no private members" },
            key_proof: {
              type: "object",
              description:
                `Optional proof of possession of public_key: {svc_agent_pop: 1, org_id, agent_id, fingerprint, at, signature}, signature a flattened JWS (typ ${AGENT_POP_TYP}) ` +
                "by the key being registered over the JCS of the other members; at within 5 minutes of the service clock. A proven registration displaces an unproven one of the same key.",
            },
          },
        },
        response: {
          201: {
            type: "object",
            required: ["agent_id", "status", "verification_level", "fingerprint", "score"],
            properties: {
              agent_id: { type: "string" },
              status: { type: "string" },
              verification_level: { type: "string" },
              fingerprint: { type: "string" },
              score: { type: "integer" },
              key_proven: { type: "boolean", description: "true when the registration carried a valid key_proof (absent otherwise)" },
              displaced_agent_id: {
                type: "string",
                description: "The agent whose unproven registration of this key this one displaced (it is suspended for good)",
              },
            },
          },
          ...errorResponses(400, 401, 403, 409, 500, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("agents:write"),
    },
    async (request, reply) => {
      const credential = keyCredential(request);
      if (credential.org_type !== "agent_operator") throw new ApiError("FORBIDDEN", "only agent_operator organizations register agents");
      const signer = logSignerOf(app);
      const publicKey = parseKey(request.body.public_key);
      const fingerprint = keyId(publicKey);
      const now = app.clock();
      const proof = request.body.key_proof;
      if (proof !== undefined) {
        const checked = await checkAgentPop(proof, { orgId: credential.org_id, agentId: request.body.agent_id, publicKey, fingerprint, nowMs: now.getTime() });
        if (!checked.ok) throw new ApiError("AGENT_KEY_PROOF_INVALID", `key_proof: ${checked.problem}`);
      }
      const { agent, score, displaced } = await withTransaction(app.requireDb(), async (client) => {
        const out = await insertAgent(
          client,
          {
            agent_id: request.body.agent_id,
            org_id: credential.org_id,
            principal_id: request.body.principal_id,
            verification_level: request.body.verification_level,
            public_key: publicKey,
            fingerprint,
            key_proven: proof !== undefined,
          },
          now,
        );
        if (!out.ok) throw new ApiError(out.conflict === "agent_id" ? "AGENT_ID_TAKEN" : "AGENT_KEY_TAKEN");
        await appendLogEntries(client, [registrationLogEntry(out.agent)], signer, logAppendOptions(app, now));
        const standing = await agentStanding(client, out.agent, now);
        return { agent: out.agent, score: standing.trust_score.score, displaced: out.displaced };
      });
      if (displaced !== undefined) app.verifyRuntime?.candidates.forget(displaced);
      directory.clear();
      request.log.info({ agent_id: agent.agent_id, org_id: agent.org_id, key_proven: agent.key_proven, displaced_agent_id: displaced }, "agent registered");
      return reply.code(201).send({
        agent_id: agent.agent_id,
        status: agent.status,
        verification_level: agent.verification_level,
        fingerprint: agent.fingerprint,
        score,
        // Only for a proven key: an unproven registration answers exactly the spec's body.
        ...(agent.key_proven ? { key_proven: true } : {}),
        ...(displaced !== undefined ? { displaced_agent_id: displaced } : {}),
      });
    },
  );
}
