/**
 * JSON schemas of the transparency-log routes: they validate what they can (path and query
 * parameters), serialise the answers and describe the area in /openapi.json.
 */
import { HASH_PATTERN } from "../../../core/canonical/index.js";
import { LOG_KINDS } from "../../../core/tlog/index.js";

/** `{error}` of every failure. */
export const errorSchema = { type: "object", required: ["error"], properties: { error: { type: "string" } } } as const;

const hash = { type: "string", pattern: HASH_PATTERN } as const;

/** A log entry `{kind, sequence, body, entry_hash, prev_entry_hash}`. */
export const logEntrySchema = {
  type: "object",
  required: ["kind", "sequence", "body", "entry_hash"],
  properties: {
    kind: { type: "string", enum: [...LOG_KINDS] },
    sequence: { type: "integer", minimum: 1 },
    body: { type: "object", additionalProperties: true },
    entry_hash: hash,
    prev_entry_hash: { ...hash, description: "Present on every entry after the first" },
  },
} as const;

/** A signed tree head. */
export const treeHeadSchema = {
  type: "object",
  required: ["algorithm", "at", "svc_tree_head", "root", "tree_size", "signature"],
  properties: {
    algorithm: { type: "string", enum: ["EdDSA"] },
    at: { type: "string", format: "date-time" },
    svc_tree_head: { type: "integer", enum: [1] },
    root: hash,
    tree_size: { type: "integer", minimum: 1 },
    signature: {
      type: "object",
      description: "Flattened JWS, protected header typ svc-tree-head+jws, payload the RFC 8785 canonical head without signature",
      required: ["protected", "payload", "signature"],
      properties: { protected: { type: "string" }, payload: { type: "string" }, signature: { type: "string" } },
    },
  },
} as const;

/** The inclusion proof object. */
export const inclusionProofSchema = {
  type: "object",
  required: ["sequence", "index", "leaf", "proof", "root", "tree_size"],
  properties: {
    sequence: { type: "integer", minimum: 1 },
    index: { type: "integer", minimum: 0, description: "sequence - 1" },
    leaf: { ...hash, description: "RFC 6962 leaf hash of the canonical entry" },
    proof: {
      type: "array",
      items: {
        type: "object",
        required: ["hash", "side"],
        properties: { hash, side: { type: "string", enum: ["left", "right"], description: "A hint: verifiers derive it" } },
      },
    },
    root: hash,
    tree_size: { type: "integer", minimum: 1 },
  },
} as const;

/** A consistency proof. */
export const consistencyProofSchema = {
  type: "object",
  required: ["first", "second", "proof"],
  properties: {
    first: { type: "integer", minimum: 1 },
    second: { type: "integer", minimum: 1 },
    proof: { type: "array", items: hash, description: "RFC 9162 consistency proof" },
  },
} as const;

/** A tree size in a query string. */
export const treeSizeParam = { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;

/** The append request, as documented (the handler checks it itself for the spec's texts). */
export const appendBodySchema = {
  type: "object",
  required: ["kind", "body"],
  properties: { kind: { type: "string", enum: [...LOG_KINDS] }, body: { type: "object", additionalProperties: true } },
} as const;
