/**
 * `POST /v1/reports` (scope reports:write): files a transaction outcome, fraud incident,
 * chargeback or policy violation about an agent. Answer 201 `{report_id, kind}`.
 *
 * One transaction (./file.ts): the agent row is locked, the report stored (409 for a
 * duplicate: same reporter organization, agent, kind and evidence hash), the organization's
 * count for the UTC day incremented (429 past BUR_REPORT_DAILY_CAP), a `fraud_incident`
 * appended to the transparency log as kind `incident`, and, when the report is a fraud
 * incident or lowers the score by 50 points or more, one alert enqueued per active
 * subscription on the agent.
 */
import type { FastifyPluginAsync } from "fastify";
import { HASH_PATTERN, type HashString } from "../../../core/canonical/index.js";
import { AGENT_ID_PATTERN, MAX_SUMMARY_LENGTH, REPORT_KINDS, type ReportKind } from "../../../core/registry/index.js";
import { keyCredential } from "../../plugins/auth.js";
import { errorResponses } from "../../errors.js";
import { logSignerOf } from "../shared/registry-log.js";
import { registrySchemaErrors } from "../shared/schema-errors.js";
import { fileReportWithEffects } from "./file.js";
import { textSchema } from "../../../core/schemas/index.js";

interface ReportBody {
  agent_id: string;
  kind: ReportKind;
  evidence_hash: HashString;
  summary: string;
}

const reportRoutes: FastifyPluginAsync = async (app) => {
  app.post<{ Body: ReportBody }>(
    "/v1/reports",
    {
      schema: {
        tags: ["registry"],
        summary: "File a report about an agent (scope reports:write)",
        description:
          "A duplicate (same organization, agent, kind and evidence_hash) is 409; past the organization's daily cap " +
          "(BUR_REPORT_DAILY_CAP per UTC day) 429. A fraud_incident is logged (kind incident) and alerts subscribers; " +
          "a score drop of 50 points or more alerts subscribers.",
        body: {
          type: "object",
          required: ["agent_id", "kind", "evidence_hash", "summary"],
          properties: {
            agent_id: { type: "string", pattern: AGENT_ID_PATTERN },
            kind: { type: "string", enum: [...REPORT_KINDS] },
            evidence_hash: { type: "string", pattern: HASH_PATTERN },
            summary: textSchema({ maxLength: MAX_SUMMARY_LENGTH }),
          },
        },
        response: {
          201: { type: "object", required: ["report_id", "kind"], properties: { report_id: { type: "string" }, kind: { type: "string" } } },
          ...errorResponses(400, 401, 403, 404, 409, 429, 500, 503),
        },
      },
      schemaErrorFormatter: registrySchemaErrors,
      onRequest: app.requireScope("reports:write"),
    },
    async (request, reply) => {
      const credential = keyCredential(request);
      const signer = request.body.kind === "fraud_incident" ? logSignerOf(app) : null;
      const out = await fileReportWithEffects(app, {
        input: { ...request.body, org_id: credential.org_id, key_id: credential.key_id },
        signer,
        now: app.clock(),
      });
      request.log.info({ report_id: out.report_id, agent_id: request.body.agent_id, kind: out.kind, alert: out.alert, alerted: out.alerted }, "report filed");
      return reply.code(201).send({ report_id: out.report_id, kind: out.kind });
    },
  );
};

export default reportRoutes;
