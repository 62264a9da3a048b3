/**
 * The portal's approval routes (docs/reference/approvals.md), all with a live portal session
 * (`Authorization: Bearer bps_...`):
 *
 * - `GET /v1/portal/approvals`: the session principal's approvals, newest first;
 * - `POST /v1/portal/passkeys/options` then `POST /v1/portal/passkeys` `{response}`: register a
 *   passkey (WebAuthn, @simplewebauthn/server; user verification required). The registration
 *   challenge is derived from the session's token hash, so only this session can complete it;
 * - `POST /v1/portal/approvals/{id}/options` `{decision}` then
 *   `POST /v1/portal/approvals/{id}/passkey-decision` `{decision, response}`: decide with a
 *   passkey. The challenge IS the SHA-256 of the canonical approval content plus the decision
 *   (src/core/approvals `webauthnChallenge`), so the authenticator's signature commits to
 *   exactly what the page shows; the assertion must come from one of the principal's own
 *   passkeys, with user verification, for the service's origin and RP ID.
 *
 * Another principal's approval answers 404, as an unknown one. The four WebAuthn ceremony
 * routes are the page's, hidden from /openapi.json (their bodies are the browser library's).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { webauthnChallenge, type ApprovalDecision } from "../../../core/approvals/index.js";
import { sha256 } from "../../../core/canonical/index.js";
import { addPasskey, approvalsOfPrincipal, findApproval, passkeysOf, raisePasskeyCounter, type StoredApproval } from "../../../store/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { bearerSessionToken, tokenHash } from "../portal/credentials.js";
import { requireSession } from "../portal/sessions.js";
import { APPROVAL_SCHEMA, approvalBody, principalBaseUrl, recordDecision } from "./approval.js";

/** The WebAuthn library, loaded on the first ceremony (it is not needed to start the server). */
const webauthn = () => import("@simplewebauthn/server");

/** The relying party: the service's public origin and its host name. */
function relyingParty(app: FastifyInstance): { origin: string; rpID: string } {
  const u = new URL(principalBaseUrl(app));
  return { origin: u.origin, rpID: u.hostname };
}

/** Bytes in a buffer of their own (what the WebAuthn library takes). */
function own(b: Uint8Array): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(b);
}

function registrationChallenge(request: FastifyRequest): Uint8Array<ArrayBuffer> {
  const token = bearerSessionToken(request.headers.authorization) ?? "";
  return own(sha256(Buffer.concat([Buffer.from("writ passkey registration\u0000"), tokenHash(token)])));
}

async function principalApproval(app: FastifyInstance, principalId: string, id: string): Promise<StoredApproval> {
  const a = await findApproval(app.requireDb(), id);
  if (!a || a.principalId !== principalId) throw new ApiError("APPROVAL_NOT_FOUND");
  return a;
}

const ID_PARAMS = { type: "object", required: ["approval_id"], properties: { approval_id: { type: "string", pattern: "^apr_[0-9a-f]{24}$" } } } as const;
const DECISION = { type: "string", enum: ["approve", "decline"] } as const;
const anyObject = { type: "object", additionalProperties: true } as const;

/** Registers the portal's approval and passkey routes. */
export function registerPortalApprovals(app: FastifyInstance): void {
  app.get(
    "/v1/portal/approvals",
    {
      schema: {
        tags: ["portal"],
        summary: "The signed-in principal's approvals, newest first",
        response: {
          200: {
            type: "object",
            required: ["principal_id", "approvals", "passkeys"],
            properties: { principal_id: { type: "string" }, passkeys: { type: "integer" }, approvals: { type: "array", items: APPROVAL_SCHEMA } },
          },
          ...errorResponses(401, 503),
        },
      },
    },
    async (request, reply) => {
      const { principalId } = await requireSession(app, request);
      const pool = app.requireDb();
      const now = app.clock();
      const list = await approvalsOfPrincipal(pool, principalId, 50);
      void reply.header("cache-control", "no-store");
      return { principal_id: principalId, passkeys: (await passkeysOf(pool, principalId)).length, approvals: list.map((a) => approvalBody(app, a, now)) };
    },
  );

  app.post(
    "/v1/portal/passkeys/options",
    {
      schema: {
        tags: ["portal"],
        hide: true,
        summary: "WebAuthn registration options for a new passkey of the signed-in principal",
        response: { 200: anyObject, ...errorResponses(401, 503) },
      },
    },
    async (request) => {
      const { principalId, email } = await requireSession(app, request);
      const { rpID } = relyingParty(app);
      const existing = await passkeysOf(app.requireDb(), principalId);
      return (await webauthn()).generateRegistrationOptions({
        rpName: "Writ",
        rpID,
        userName: email,
        userID: new Uint8Array(Buffer.from(principalId)),
        challenge: registrationChallenge(request),
        attestationType: "none",
        authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
        excludeCredentials: existing.map((p) => ({ id: p.credentialId })),
      });
    },
  );

  app.post<{ Body: { response: RegistrationResponseJSON } }>(
    "/v1/portal/passkeys",
    {
      schema: {
        tags: ["portal"],
        hide: true,
        summary: "Register a passkey of the signed-in principal (the browser's registration response)",
        body: { type: "object", required: ["response"], properties: { response: anyObject } },
        response: {
          200: { type: "object", required: ["credential_id"], properties: { credential_id: { type: "string" } } },
          ...errorResponses(400, 401, 409, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const { principalId } = await requireSession(app, request);
      const { origin, rpID } = relyingParty(app);
      let info;
      try {
        const v = await (
          await webauthn()
        ).verifyRegistrationResponse({
          response: request.body.response,
          expectedChallenge: Buffer.from(registrationChallenge(request)).toString("base64url"),
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: true,
        });
        if (!v.verified) throw new Error("the registration did not verify");
        info = v.registrationInfo;
      } catch (e) {
        throw new ApiError("VALIDATION_FAILED", `passkey registration refused: ${e instanceof Error ? e.message : String(e)}`);
      }
      const c = info.credential;
      const added = await addPasskey(app.requireDb(), {
        credentialId: c.id,
        principalId,
        publicKey: c.publicKey,
        counter: c.counter,
        transports: c.transports ?? [],
      });
      if (!added) throw new ApiError("PASSKEY_EXISTS");
      request.log.info({ principal_id: principalId }, "passkey registered");
      return { credential_id: c.id };
    },
  );

  app.post<{ Params: { approval_id: string }; Body: { decision: ApprovalDecision } }>(
    "/v1/portal/approvals/:approval_id/options",
    {
      schema: {
        tags: ["portal"],
        hide: true,
        summary: "WebAuthn options to approve or decline an approval: the challenge commits to its content and the decision",
        params: ID_PARAMS,
        body: { type: "object", required: ["decision"], properties: { decision: DECISION } },
        response: { 200: anyObject, ...errorResponses(400, 401, 404, 409, 503) },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const { principalId } = await requireSession(app, request);
      const a = await principalApproval(app, principalId, request.params.approval_id);
      const keys = await passkeysOf(app.requireDb(), principalId);
      if (keys.length === 0) throw new ApiError("VALIDATION_FAILED", "register a passkey first: a decision is signed with one of your passkeys");
      return (await webauthn()).generateAuthenticationOptions({
        rpID: relyingParty(app).rpID,
        challenge: own(Buffer.from(webauthnChallenge(a.content, request.body.decision), "base64url")),
        allowCredentials: keys.map((k) => ({ id: k.credentialId })),
        userVerification: "required",
      });
    },
  );

  app.post<{ Params: { approval_id: string }; Body: { decision: ApprovalDecision; response: AuthenticationResponseJSON } }>(
    "/v1/portal/approvals/:approval_id/passkey-decision",
    {
      schema: {
        tags: ["portal"],
        hide: true,
        summary: "Approve or decline with a passkey (the browser's assertion over the approval's challenge)",
        params: ID_PARAMS,
        body: { type: "object", required: ["decision", "response"], properties: { decision: DECISION, response: anyObject } },
        response: {
          200: { ...APPROVAL_SCHEMA, properties: { ...APPROVAL_SCHEMA.properties, log_sequence: { type: "integer" } } },
          ...errorResponses(400, 401, 404, 409, 500, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
    },
    async (request) => {
      const { principalId } = await requireSession(app, request);
      const a = await principalApproval(app, principalId, request.params.approval_id);
      const { decision, response } = request.body;
      const pool = app.requireDb();
      const key = (await passkeysOf(pool, principalId)).find((k) => k.credentialId === response.id);
      if (!key) throw new ApiError("APPROVAL_NOT_VERIFIED", "the assertion is not from a passkey of this principal");
      const { origin, rpID } = relyingParty(app);
      let newCounter: number;
      try {
        const v = await (
          await webauthn()
        ).verifyAuthenticationResponse({
          response,
          expectedChallenge: webauthnChallenge(a.content, decision),
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: { id: key.credentialId, publicKey: own(key.publicKey), counter: key.counter, transports: key.transports },
          requireUserVerification: true,
        });
        if (!v.verified || !v.authenticationInfo.userVerified) throw new Error("the assertion did not verify with user verification");
        newCounter = v.authenticationInfo.newCounter;
      } catch (e) {
        throw new ApiError("APPROVAL_NOT_VERIFIED", `passkey assertion refused: ${e instanceof Error ? e.message : String(e)}`);
      }
      await raisePasskeyCounter(pool, key.credentialId, newCounter);
      const r = await recordDecision(app, a, decision, {
        method: "passkey",
        key_id: key.credentialId,
        proof: { assertion: response as unknown as Record<string, unknown> },
      });
      request.log.info({ approval_id: a.approvalId, decision }, "approval decided with a passkey");
      return { ...approvalBody(app, r.approval, app.clock()), log_sequence: r.logSequence };
    },
  );
}
