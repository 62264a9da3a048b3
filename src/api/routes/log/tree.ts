/**
 * The tree as a whole: `GET /v1/log/head` (the latest signed tree head), `GET /v1/log/checkpoint`
 * (the same head as a C2SP checkpoint, text/plain, signed by the log key under the origin
 * WRIT_LOG_ORIGIN) and `GET /v1/log/consistency?first=&second=` (an RFC 9162 consistency proof
 * between two tree sizes up to the latest head).
 *
 * Checkpoint rule: the checkpoint stored with the head is served when it was signed under the
 * configured origin; otherwise (a head written by a caller that gave no origin, or the origin
 * changed) one is signed on demand with the log key: Ed25519 is deterministic, so the answer is
 * the same text either way.
 */
import type { FastifyInstance } from "fastify";
import { signCheckpoint } from "../../../core/tlog/index.js";
import { consistencyProofFor, latestTreeHead } from "../../../store/index.js";
import { ApiError, settingNotSet } from "../../errors.js";
import { lookupFailure } from "./lookup.js";
import { consistencyProofSchema, errorSchema, treeHeadSchema, treeSizeParam } from "./schemas.js";

/** Registers the head, checkpoint and consistency routes on `app`. */
export function registerTreeRoutes(app: FastifyInstance): void {
  const origin = app.settings.logOrigin;

  app.get(
    "/v1/log/head",
    {
      schema: {
        tags: ["log"],
        summary: "The latest signed tree head",
        response: { 200: treeHeadSchema, 404: errorSchema, 503: errorSchema },
      },
    },
    async () => {
      const latest = await latestTreeHead(app.requireReadDb());
      if (!latest) throw new ApiError("TREE_HEAD_NOT_FOUND");
      return latest.head;
    },
  );

  app.get(
    "/v1/log/checkpoint",
    {
      schema: {
        tags: ["log"],
        summary: "The latest tree head as a C2SP checkpoint (signed note)",
        response: {
          200: {
            description: "c2sp.org/tlog-checkpoint, Ed25519 signed note under the log origin",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          404: errorSchema,
          503: errorSchema,
        },
      },
    },
    async (_request, reply) => {
      const latest = await latestTreeHead(app.requireReadDb());
      if (!latest) throw new ApiError("TREE_HEAD_NOT_FOUND");
      let note = latest.checkpoint;
      if (note === null || !note.startsWith(`${origin}\n`)) {
        if (app.settings.checkpointOrigin === null) throw new ApiError("SETTING_NOT_SET", "WRIT_LOG_ORIGIN is not a valid checkpoint origin");
        if (app.logSigner === null) throw settingNotSet("SVC_LOG_SIGNING_SEED");
        note = signCheckpoint(app.logSigner, origin, latest.treeSize, latest.root);
      }
      return reply.type("text/plain; charset=utf-8").send(note);
    },
  );

  app.get<{ Querystring: { first: number; second: number } }>(
    "/v1/log/consistency",
    {
      schema: {
        tags: ["log"],
        summary: "Consistency proof between two tree sizes",
        description: "RFC 9162 §2.1.4 proof that the first `first` leaves are a prefix of the first `second` leaves.",
        querystring: {
          type: "object",
          required: ["first", "second"],
          properties: { first: treeSizeParam, second: treeSizeParam },
        },
        response: { 200: consistencyProofSchema, 400: errorSchema, 404: errorSchema, 503: errorSchema },
      },
    },
    async (request) => {
      const pool = app.requireReadDb();
      try {
        return await consistencyProofFor(pool, request.query.first, request.query.second);
      } catch (e) {
        throw lookupFailure(e, "TREE_HEAD_NOT_FOUND");
      }
    },
  );
}
