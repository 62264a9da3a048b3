/**
 * `POST /v1/log/entries`: appends `{kind, body}` and answers `{entry, tree_head}` with the
 * signed head of the batch the entry was written in (see ./batcher.ts).
 *
 * Checks, in order: the settings (503 naming SVC_APPEND_TOKEN or SVC_LOG_SIGNING_SEED when
 * unset, 500 when the seed does not load; 503 without storage), before the body is read; the
 * bearer append token (401 `append token does not match`, also for a missing header or another
 * scheme); the body (400 `log append needs kind and a body object` when kind or an object body
 * is missing, 400 `log entry kind is not accepted ...` for another kind). Members besides kind
 * and body are ignored.
 */
import { LARGE_BODY_LIMIT } from "../../body-shape.js";
import type { FastifyInstance } from "fastify";
import { canonicalJson } from "../../../core/canonical/index.js";
import { isLogKind, LOG_KINDS, LogEntryError } from "../../../core/tlog/index.js";
import type { LogAppendInput } from "../../../store/index.js";
import { ApiError, settingNotSet } from "../../errors.js";
import { appendTokenMatches } from "./auth.js";
import type { AppendQueue } from "./batcher.js";
import { appendBodySchema, errorSchema, logEntrySchema, treeHeadSchema } from "./schemas.js";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The append request as a typed input; throws the spec's 400s. */
export function parseAppendBody(body: unknown): LogAppendInput {
  if (!isPlainObject(body) || body.kind === undefined || body.kind === null || !isPlainObject(body.body)) {
    throw new ApiError("LOG_APPEND_INVALID");
  }
  if (!isLogKind(body.kind)) {
    throw new ApiError("LOG_KIND_REJECTED", `log entry kind is not accepted: use one of ${LOG_KINDS.join(", ")}`);
  }
  try {
    // What buildLogEntry will need: refusing here keeps one bad body from failing a batch.
    canonicalJson(body.body);
  } catch {
    throw new ApiError("LOG_APPEND_INVALID", "log append body has no canonical JSON form");
  }
  return { kind: body.kind, body: body.body };
}

/** Registers the append route on `app`, writing through `batcher`. */
export function registerAppendRoute(app: FastifyInstance, batcher: AppendQueue): void {
  const { settings } = app;
  app.post(
    "/v1/log/entries",
    {
      bodyLimit: LARGE_BODY_LIMIT,
      schema: {
        tags: ["log"],
        summary: "Append an entry and sign a new tree head",
        description:
          "Authorization: Bearer <SVC_APPEND_TOKEN>. Appends arriving together share one transaction and one signed head; " +
          "each caller gets its own entry and that head.",
        body: appendBodySchema,
        response: {
          200: { type: "object", required: ["entry", "tree_head"], properties: { entry: logEntrySchema, tree_head: treeHeadSchema } },
          400: errorSchema,
          401: errorSchema,
          500: errorSchema,
          503: errorSchema,
        },
      },
      // The body schema documents the request; the handler checks it to answer the spec's texts.
      validatorCompiler: () => (data: unknown) => ({ value: data }),
      onRequest: async (request) => {
        if (settings.appendToken === null) throw settingNotSet("SVC_APPEND_TOKEN");
        if (settings.logSigner.status === "unset") throw settingNotSet("SVC_LOG_SIGNING_SEED");
        if (settings.logSigner.status === "invalid") throw new ApiError("KEY_LOAD_FAILED", "SVC_LOG_SIGNING_SEED failed to load");
        app.requireDb();
        if (!appendTokenMatches(request.headers.authorization, settings.appendToken)) throw new ApiError("APPEND_TOKEN_MISMATCH");
      },
    },
    async (request) => {
      const input = parseAppendBody(request.body);
      try {
        const { entry, head } = await batcher.add(input);
        return { entry, tree_head: head };
      } catch (e) {
        if (e instanceof LogEntryError) throw new ApiError("LOG_APPEND_INVALID", e.message);
        throw e;
      }
    },
  );
}
