/**
 * Reading entries: `GET /v1/log/entries/{sequence}`, `GET /v1/log/entries/by-hash/{entry_hash}`
 * and `GET /v1/log/entries/{sequence}/proof[?tree_size=N]`.
 *
 * A sequence that is not a plain positive decimal safe integer, or that lies outside the log
 * (or outside the tree asked for), is a 404 `log entry was not found`, never a 500. The proof
 * is against the latest signed head, or against the first N leaves with `?tree_size=N`
 * (404 `tree size is beyond the latest signed tree head` past the head).
 */
import type { FastifyInstance } from "fastify";
import { inclusionProofFor, logEntryByHash, logEntryBySequence } from "../../../store/index.js";
import { ApiError } from "../../errors.js";
import { lookupFailure } from "./lookup.js";
import { parseEntryHash, parseSequence } from "./params.js";
import { errorSchema, inclusionProofSchema, logEntrySchema, treeSizeParam } from "./schemas.js";

const entryAnswer = { type: "object", required: ["entry"], properties: { entry: logEntrySchema } } as const;
const notFound = () => new ApiError("LOG_ENTRY_NOT_FOUND");

/** Registers the entry and proof routes on `app`. */
export function registerEntryRoutes(app: FastifyInstance): void {
  app.get<{ Params: { sequence: string } }>(
    "/v1/log/entries/:sequence",
    {
      schema: {
        tags: ["log"],
        summary: "One log entry by sequence (from 1)",
        params: { type: "object", properties: { sequence: { type: "string" } } },
        response: { 200: entryAnswer, 404: errorSchema, 503: errorSchema },
      },
    },
    async (request) => {
      const pool = app.requireReadDb();
      const sequence = parseSequence(request.params.sequence);
      const entry = sequence === undefined ? undefined : await logEntryBySequence(pool, sequence);
      if (!entry) throw notFound();
      return { entry };
    },
  );

  app.get<{ Params: { entry_hash: string } }>(
    "/v1/log/entries/by-hash/:entry_hash",
    {
      schema: {
        tags: ["log"],
        summary: "One log entry by entry_hash",
        params: { type: "object", properties: { entry_hash: { type: "string", description: "sha256: + 64 lowercase hex" } } },
        response: { 200: entryAnswer, 404: errorSchema, 503: errorSchema },
      },
    },
    async (request) => {
      const pool = app.requireReadDb();
      const hash = parseEntryHash(request.params.entry_hash);
      const entry = hash === undefined ? undefined : await logEntryByHash(pool, hash);
      if (!entry) throw notFound();
      return { entry };
    },
  );

  app.get<{ Params: { sequence: string }; Querystring: { tree_size?: number } }>(
    "/v1/log/entries/:sequence/proof",
    {
      schema: {
        tags: ["log"],
        summary: "Merkle inclusion proof of an entry",
        description: "Against the latest signed tree head, or the first tree_size leaves when given.",
        params: { type: "object", properties: { sequence: { type: "string" } } },
        querystring: { type: "object", properties: { tree_size: treeSizeParam } },
        response: { 200: inclusionProofSchema, 400: errorSchema, 404: errorSchema, 503: errorSchema },
      },
    },
    async (request) => {
      const pool = app.requireReadDb();
      const sequence = parseSequence(request.params.sequence);
      if (sequence === undefined) throw notFound();
      try {
        return await inclusionProofFor(pool, sequence, request.query.tree_size);
      } catch (e) {
        throw lookupFailure(e, "LOG_ENTRY_NOT_FOUND");
      }
    },
  );
}
