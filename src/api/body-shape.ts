/**
 * Bounds on a JSON request body that hold BEFORE it is parsed, on every route (authenticated or
 * not): its size (`bodyLimit`, per route) and its shape (nesting depth and number of arrays and
 * objects), checked by a streaming scan of the raw bytes as they arrive (`scanJsonBodies`, a
 * `preParsing` hook). A body over a bound is refused with 400 `{error}` as soon as the scan
 * sees it, so `JSON.parse`, the I-JSON check and the schema never see it: a megabyte of
 * nested arrays costs a few bytes of scanning, not a parse and a walk of half a million arrays.
 *
 * The scan is a small state machine over bytes (strings and their escapes are skipped; every
 * structural byte of JSON is ASCII and no byte of a multi-byte UTF-8 sequence is, so chunk
 * boundaries and non-ASCII text are safe). It does not validate: malformed JSON within the
 * bounds is left to the parser, which answers 400 MALFORMED_JSON as before.
 */
import { Transform, type TransformCallback } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors.js";

/** The default body limit (bytes): every route takes small bodies unless it says otherwise. */
export const SMALL_BODY_LIMIT = 64 * 1024;
/** The body limit of routes that take whole records (log entries, revocation pushes, mandates). */
export const LARGE_BODY_LIMIT = 1024 * 1024;
/** Deepest nesting of arrays and objects accepted in a body (the deepest route body needs under 16). */
export const MAX_JSON_DEPTH = 32;
/** Most arrays and objects accepted in one body. */
export const MAX_JSON_CONTAINERS = 1_000;

/** Bounds of the scan. */
export interface JsonShapeLimits {
  maxDepth: number;
  maxContainers: number;
}

const DEFAULT_LIMITS: JsonShapeLimits = { maxDepth: MAX_JSON_DEPTH, maxContainers: MAX_JSON_CONTAINERS };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** Work the scans did in this process (tests count it instead of timing it). */
export const bodyScanStats = { bytes: 0, refused: 0 };

/** The streaming scan of one body (see the module comment). */
export class JsonShapeScan {
  private depth = 0;
  private containers = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly limits: JsonShapeLimits = DEFAULT_LIMITS) {}

  /** Scans the next bytes; the refusal text once a bound is passed (the scan then stops), else undefined. */
  push(chunk: Uint8Array): string | undefined {
    const { maxDepth, maxContainers } = this.limits;
    let { depth, containers, inString, escaped } = this;
    let i = 0;
    let refusal: string | undefined;
    for (; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        depth += 1;
        containers += 1;
        if (depth > maxDepth) {
          refusal = `request body nests arrays and objects deeper than ${maxDepth} levels`;
          break;
        }
        if (containers > maxContainers) {
          refusal = `request body holds more than ${maxContainers} arrays and objects`;
          break;
        }
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth -= 1;
    }
    bodyScanStats.bytes += refusal === undefined ? chunk.length : i + 1;
    Object.assign(this, { depth, containers, inString, escaped });
    return refusal;
  }
}

/** A pass-through stream that fails with a 400 `ApiError` once the scan refuses the body. */
class ScanningStream extends Transform {
  private readonly scan: JsonShapeScan;
  constructor(
    limits: JsonShapeLimits,
    private readonly onRefuse: () => void,
  ) {
    super();
    this.scan = new JsonShapeScan(limits);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const refusal = this.scan.push(chunk);
    if (refusal === undefined) return done(null, chunk);
    bodyScanStats.refused += 1;
    this.onRefuse();
    done(new ApiError("BODY_TOO_COMPLEX", refusal));
  }
}

/** The methods whose bodies Fastify parses (the API's routes use POST, PATCH and DELETE). */
const PARSED_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** True when the request says its body is JSON (`application/json`, `application/*+json`). */
function isJson(request: FastifyRequest): boolean {
  const type = request.headers["content-type"];
  return typeof type === "string" && /^\s*application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i.test(type);
}

/**
 * Registers the scan on `app` (a `preParsing` hook on every route): each JSON body streams
 * through it on its way to the parser. `transfer-encoding` or `content-length` tells whether
 * there is a body at all; a request without one, or one whose declared length is over the
 * route's limit (refused unread by the parser), is not wrapped.
 */
export function scanJsonBodies(app: FastifyInstance, limits: JsonShapeLimits = DEFAULT_LIMITS): void {
  app.addHook("preParsing", (request, reply, payload, done) => {
    const length = request.headers["content-length"];
    const hasBody = request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
    // Bodies of other methods (GET, HEAD...) are never parsed: Fastify skips them and Node discards them unread.
    if (!hasBody || !PARSED_METHODS.has(request.method) || !isJson(request)) return done(null, payload);
    // A declared length over the route's limit is refused by the parser before it reads a byte: nothing to scan.
    const limit = request.routeOptions.bodyLimit;
    if (length !== undefined && limit !== undefined && Number(length) > limit) return done(null, payload);
    // The rest of a refused body is never read: the answer closes the connection, so no later
    // request on it is taken from the middle of that body (and nothing reads the remainder).
    const scanning = new ScanningStream(limits, () => void reply.header("connection", "close"));
    payload.on("error", (err) => scanning.destroy(err));
    // Fastify compares the bytes received with content-length: they pass through unchanged.
    done(null, payload.pipe(scanning));
  });
}
