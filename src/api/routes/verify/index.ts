/**
 * `POST /v1/verify` (an organization key with scope `verify`, of the agent's operator): checks
 * one payment action against the agent's active stored agreement and records an ALLOW in the
 * ledger (src/verify/verify-action.ts, docs/verify.md). What verify runs with is built once, at
 * start-up (src/api/plugins/verify-runtime.ts). Every decision is a 200 `{verdict,
 * svc_decision, reasons, messages, required_action, agent_id, agreement_id, action_id,
 * intent_id?, ledger_entry?}`; errors are `{error}`: 400 bad body (or an unknown currency, or
 * a proposed_at farther from the service clock than WRIT_PROPOSED_AT_SKEW_SECONDS),
 * 401/403 credentials, 403 another operator's agent, 404 unknown agent, 409 a reused
 * action_id, 503 storage unset or unreachable.
 *
 * Also registers `POST /v1/verify/outcomes` (./outcomes.ts).
 */
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { currencyRefusal } from "../../../core/money/index.js";
import { VerifyError, VERIFY_BODY_SCHEMA, VERIFY_RESPONSE_SCHEMA, type VerifyRequest, verifyAction } from "../../../verify/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { keyCredential } from "../../plugins/auth.js";
import type { VerifyRuntime } from "../../plugins/verify-runtime.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { registerOutcomes } from "./outcomes.js";

const ERROR_CODES: Record<
  VerifyError["code"],
  "AGENT_NOT_FOUND" | "AGENT_NOT_OWNED" | "VERIFY_ACTION_REUSED" | "VERIFY_ACTION_RELEASED" | "VERIFY_PROPOSED_AT_SKEW"
> = {
  AGENT_NOT_FOUND: "AGENT_NOT_FOUND",
  AGENT_NOT_OWNED: "AGENT_NOT_OWNED",
  ACTION_REUSED: "VERIFY_ACTION_REUSED",
  ACTION_RELEASED: "VERIFY_ACTION_RELEASED",
  PROPOSED_AT_SKEW: "VERIFY_PROPOSED_AT_SKEW",
};

/** The verify runtime of an app with a database (503 without one). */
export function verifyRuntimeOf(app: FastifyInstance): VerifyRuntime {
  app.requireDb();
  if (!app.verifyRuntime) throw new ApiError("DATABASE_NOT_CONFIGURED");
  return app.verifyRuntime;
}

const errors = errorResponses(400, 401, 403, 404, 409, 500, 503);

const verifyRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: VerifyRequest }>(
    "/v1/verify",
    {
      schema: {
        tags: ["verify"],
        summary: "Check a payment action against the agent's active stored agreement (scope verify, the agent's operator)",
        description:
          "ALLOW records the spend in the agreement's hash-chained ledger (ledger_entry); DENY maps to svc_decision BLOCK; " +
          "a REVOKE decision also revokes the delegation. Idempotent on (agent_id, action.action_id): a retry gets the stored answer; " +
          "the same action_id with a different request is a 409. See docs/verify.md.",
        body: VERIFY_BODY_SCHEMA,
        response: { 200: VERIFY_RESPONSE_SCHEMA, ...errors },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("verify"),
    },
    async (request) => {
      const rt = verifyRuntimeOf(app);
      const started = process.hrtime.bigint();
      try {
        const credential = keyCredential(request);
        const body = request.body;
        const refused = currencyRefusal(body.action.currency);
        if (refused !== undefined) throw new ApiError("VALIDATION_FAILED", `action.currency ${body.action.currency} ${refused}`);
        const answer = await verifyAction(rt.verify, credential.org_id, body);
        request.log.debug({ agent_id: answer.agent_id, action_id: answer.action_id, verdict: answer.verdict, reasons: answer.reasons }, "verify decided");
        return answer;
      } catch (e) {
        if (e instanceof VerifyError) throw new ApiError(ERROR_CODES[e.code], e.message);
        throw e;
      } finally {
        rt.metrics.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      }
    },
  );

  registerOutcomes(app);
};

export default verifyRoutes;
