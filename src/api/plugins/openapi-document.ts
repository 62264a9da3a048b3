/**
 * Completes the document @fastify/swagger builds from the route schemas (see ./openapi.ts):
 * security schemes and requirements, response descriptions and error examples
 * (./openapi-operations.ts), captured examples (./openapi-examples.json), tags in order and the
 * paths in tag order. An operation missing from the tables keeps what the schemas say (the
 * tests fail on it: test/unit/api/openapi-examples.test.ts).
 */
import { readFileSync } from "node:fs";
import { ERROR_STATUSES, OPERATIONS, SECURITY_SCHEMES, TAGS } from "./openapi-operations.js";

/** The captured examples of one operation (hack/openapi/capture-examples.ts). */
export interface OperationExamples {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  request?: unknown;
  responses: Record<string, unknown>;
}

/** The captured examples, by `METHOD /path/{param}`. */
export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExamples>> = JSON.parse(
  readFileSync(new URL("./openapi-examples.json", import.meta.url), "utf8"),
) as Record<string, OperationExamples>;

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

interface Media {
  schema?: unknown;
  example?: unknown;
}
interface Operation {
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { description?: string; content?: Record<string, Media> }>;
}
type Paths = Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;

/** The example of response `status` of an operation: captured, another success of it, or the status's. */
function responseExample(ex: OperationExamples | undefined, status: string): unknown {
  const captured = ex?.responses[status];
  if (captured !== undefined) return captured;
  const code = Number(status);
  if (code < 300) return Object.entries(ex?.responses ?? {}).find(([s]) => Number(s) < 300)?.[1];
  const e = ERROR_STATUSES[code];
  return e ? { error: e.example } : undefined;
}

/**
 * A copy of a request example whose `action.proposed_at` reads as the time it is serialized:
 * verify refuses a `proposed_at` farther than WRIT_PROPOSED_AT_SKEW_SECONDS from the service
 * clock, so the captured time would make Try it out answer 400 a few minutes after capture. The
 * document is built once and cached; each answer serializes it anew, so the example stays live.
 */
export function withLiveProposedAt(example: unknown): unknown {
  if (typeof example !== "object" || example === null) return example;
  const action = (example as { action?: unknown }).action;
  if (typeof action !== "object" || action === null || !("proposed_at" in action)) return example;
  const live = { ...(action as Record<string, unknown>) };
  Object.defineProperty(live, "proposed_at", { enumerable: true, get: () => new Date().toISOString() });
  return { ...(example as Record<string, unknown>), action: live };
}

function completeOperation(key: string, op: Operation): void {
  const doc = OPERATIONS[key];
  const ex = OPERATION_EXAMPLES[key];
  if (doc && doc.security.length > 0) {
    op.security = [...doc.security.map((name) => ({ [name]: [] })), ...(doc.anonymousToo ? [{}] : [])];
  }
  for (const p of op.parameters ?? []) {
    const v = p.in === "path" ? ex?.params?.[p.name] : ex?.query?.[p.name];
    if (v !== undefined) p.example = v;
  }
  const body = op.requestBody?.content?.["application/json"];
  if (body && ex?.request !== undefined) body.example = withLiveProposedAt(ex.request);
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if (response.description === undefined || response.description === "Default Response") {
      response.description = Number(status) < 300 ? (doc?.ok ?? "Success") : (ERROR_STATUSES[Number(status)]?.description ?? "Error");
    }
    const example = responseExample(ex, status);
    if (example === undefined) continue;
    for (const media of Object.values(response.content ?? {})) media.example = example;
  }
}

/** The document, completed (see the module comment). Mutates and returns `document`. */
export function completeDocument<D extends object>(document: D): D {
  const d = document as D & { tags?: unknown; paths?: Paths; components?: Record<string, unknown> };
  d.components = { ...d.components, securitySchemes: SECURITY_SCHEMES };
  d.tags = TAGS.map((t) => ({ ...t }));
  const paths: Paths = d.paths ?? {};
  for (const [path, ops] of Object.entries(paths)) {
    for (const m of METHODS) {
      const op = ops[m];
      if (op) completeOperation(`${m.toUpperCase()} ${path}`, op);
    }
  }
  // Paths in the order of their first operation's tag (verify first); the schemas' order within.
  const rank = (ops: Paths[string]) => {
    const tag = METHODS.map((m) => ops[m]?.tags?.[0]).find((t) => t !== undefined);
    const i = TAGS.findIndex((t) => t.name === tag);
    return i < 0 ? TAGS.length : i;
  };
  const ordered = Object.entries(paths)
    .map(([path, ops], i) => ({ path, ops, i, r: rank(ops) }))
    .sort((a, b) => a.r - b.r || a.i - b.i);
  d.paths = Object.fromEntries(ordered.map((o) => [o.path, o.ops]));
  return document;
}
