/**
 * The data-plane Fastify application: `buildApp(settings, deps)` wires the shared plugins
 * (errors, request ids, db, keys, metrics, openapi, health) and then every route area.
 *
 * Extension point: a route area is a Fastify plugin `src/api/routes/<area>/index.ts` (default
 * export) added to `ROUTE_AREAS` below. It reads what it needs from decorators
 * (`app.settings`, `app.requireDb()`, `app.logSigner`, `app.metrics`, `app.clock`, ...), throws
 * `ApiError`s for failures, and declares a JSON schema on each route (validation and
 * /openapi.json come from it).
 *
 * Promise: building the app does no I/O (the pool connects lazily); every answer, including
 * errors and unknown routes, is JSON (except `/metrics`, the log checkpoint and the portal's
 * sign-in page); every response carries `x-request-id`; the request log never holds a
 * credential-carrying query value (./request-log.ts).
 */
import { randomUUID } from "node:crypto";
import { AjvCompiler, type BuildCompilerFromPool as BuildValidator, type Options as AjvOptions } from "@fastify/ajv-compiler";
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from "fastify";
import type { FastifyLoggerStreamDestination } from "fastify/types/logger.js";
import type { Pool } from "pg";
import type { Registry } from "prom-client";
import { createPool, appendRevocationToLog, type RevocationLogAppender } from "../store/index.js";
import { ApiError, errorHandler, notFoundHandler } from "./errors.js";
import authPlugin from "./plugins/auth.js";
import changesPlugin from "./plugins/changes.js";
import dbPlugin from "./plugins/db.js";
import healthPlugin from "./plugins/health.js";
import keysPlugin from "./plugins/keys.js";
import metricsPlugin from "./plugins/metrics.js";
import openapiPlugin from "./plugins/openapi.js";
import agentRoutes from "./routes/agents/index.js";
import inquiryRoutes from "./routes/inquiries/index.js";
import keysRoutes from "./routes/keys/index.js";
import logRoutes from "./routes/log/index.js";
import mandateRoutes from "./routes/mandates/index.js";
import orgRoutes from "./routes/orgs/index.js";
import portalRoutes from "./routes/portal/index.js";
import reportRoutes from "./routes/reports/index.js";
import revocationRoutes from "./routes/revocations/index.js";
import subscriptionRoutes from "./routes/subscriptions/index.js";
import fxRoutes from "./routes/fx/index.js";
import demoRoutes from "./routes/demo/index.js";
import verifyRoutes from "./routes/verify/index.js";
import delegationRoutes from "./routes/delegations/index.js";
import recordRoutes from "./routes/records/index.js";
import adminRoutes from "./routes/admin/index.js";
import approvalRoutes from "./routes/approvals/index.js";
import landingRoutes from "./routes/landing/index.js";
import verifyRuntimePlugin from "./plugins/verify-runtime.js";
import type { Settings } from "./settings.js";
import { inexactNumberError, loneSurrogateError } from "./well-formed-input.js";
import { scanJsonBodies, SMALL_BODY_LIMIT } from "./body-shape.js";
import { serializeRequest } from "./request-log.js";
import { webhooksPlugin } from "../webhooks/index.js";
import { retentionPlugin } from "../retention/index.js";
import { hasNul } from "../core/schemas/index.js";

/** Route areas, registered in this order. Add a new area here. */
const ROUTE_AREAS: readonly FastifyPluginAsync[] = [
  keysRoutes,
  revocationRoutes,
  logRoutes,
  portalRoutes,
  orgRoutes,
  agentRoutes,
  inquiryRoutes,
  reportRoutes,
  subscriptionRoutes,
  fxRoutes,
  demoRoutes,
  verifyRoutes,
  delegationRoutes,
  recordRoutes,
  mandateRoutes,
  adminRoutes,
  approvalRoutes,
  landingRoutes,
];

/** Replaceable parts of the app (tests and `writ serve` pass them; all are optional). */
export interface AppDeps {
  /** The pool to use; default: one created from `settings.databaseUrl` (closed with the app). */
  pool?: Pool | null;
  /**
   * The pool of the read routes a standby can answer; default: one created from
   * `settings.databaseReadUrl` when set (closed with the app), else `pool`.
   */
  readPool?: Pool | null;
  /** Whether the schema is migrated (default true); see `markSchemaReady`. */
  schemaReady?: boolean;
  /** A metrics registry (default: a new one with the default process metrics). */
  metricsRegistry?: Registry;
  /** Appends a stored revocation to the transparency log (default: the log store's). */
  appendRevocationToLog?: RevocationLogAppender;
  /** The clock (default `() => new Date()`). */
  clock?: () => Date;
  /** Where the logger writes (default stdout); tests capture the log with it. */
  logStream?: FastifyLoggerStreamDestination;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The process settings, loaded once. */
    readonly settings: Settings;
    /** The current time; routes never call `new Date()` themselves. */
    clock(): Date;
    /** Appends a stored revocation to the transparency log (see src/store/revocation/log.ts). */
    readonly revocationLog: RevocationLogAppender;
  }
}

/** Incoming request ids are honoured when they are short and plain; otherwise a UUID. */
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request body limit of every route (bytes), unless the route sets its own (`bodyLimit`: the
 * routes that take whole records, ./body-shape.ts LARGE_BODY_LIMIT).
 */
export const BODY_LIMIT = SMALL_BODY_LIMIT;

/**
 * The 400 for a member of `part` (query or path) that no route may use: a non-finite number,
 * or text with a NUL character (Postgres text cannot hold one), or undefined.
 */
function unusableMember(part: string, values: unknown): ApiError | undefined {
  if (typeof values !== "object" || values === null) return undefined;
  for (const [k, v] of Object.entries(values)) {
    if (typeof v === "number" && !Number.isFinite(v)) return new ApiError("VALIDATION_FAILED", `${part}/${k} must be a finite number`);
    const texts = Array.isArray(v) ? v : [v];
    if (texts.some(hasNul)) return new ApiError("VALIDATION_FAILED", `${part}/${k} must not contain NUL characters`);
  }
  return undefined;
}

/**
 * The one JSON log line of every Writ process (the controller's logger writes the same:
 * src/controller/log.ts): `{"level":"info","time":"<RFC 3339, ms, UTC>","pid":..,"hostname":..,
 * ...fields,"msg":..}`. The level is its name, never pino's number.
 */
export const LOG_FORMAT = {
  formatters: { level: (label: string) => ({ level: label }), log: errorField },
  timestamp: () => `,"time":"${new Date().toISOString()}"`,
};

/**
 * One field for errors in every process: `error` (the message; the controller writes the same),
 * with `stack` beside it for an unexpected error that pino serialized as `err`.
 */
function errorField(fields: Record<string, unknown>): Record<string, unknown> {
  const err = fields.err;
  if (err === undefined) return fields;
  const { err: _err, ...rest } = fields;
  if (typeof err !== "object" || err === null) return { ...rest, error: String(err) };
  const { message, stack } = err as { message?: unknown; stack?: unknown };
  return { ...rest, error: typeof message === "string" ? message : String(err), ...(typeof stack === "string" ? { stack } : {}) };
}

/** Postgres's admin_shutdown: the server is stopping (a Ctrl-C reaches `writ dev`'s Postgres too). */
const ADMIN_SHUTDOWN = "57P01";

/** Fastify's Ajv validator compiler, without type coercion for JSON bodies (see buildApp). */
function bodiesAsSent(): BuildValidator {
  const coercing: BuildValidator = AjvCompiler();
  const exact: BuildValidator = AjvCompiler();
  return (externalSchemas, options) => {
    const text = coercing(externalSchemas, options);
    // Fastify hands the Ajv options (never the JTD ones): the same, less the coercion.
    const ajvOptions = (options ?? {}) as { customOptions?: AjvOptions };
    const body = exact(externalSchemas, { ...ajvOptions, customOptions: { ...ajvOptions.customOptions, coerceTypes: false } });
    return (route) => (route.httpPart === "body" ? body(route) : text(route));
  };
}

/** Trusts the `hops` proxies nearest to the server (proxy-addr's hop index counts from 0). */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/** Builds the data-plane app. Call `listen` (or `inject`) on it; `close` releases everything. */
export function buildApp(settings: Settings, deps: AppDeps = {}): FastifyInstance {
  const t = settings.serverTimeouts;
  const app = Fastify({
    // Request URLs are logged with credential-carrying query values redacted (./request-log.ts).
    logger: {
      level: settings.logLevel,
      ...LOG_FORMAT,
      serializers: { req: serializeRequest },
      ...(deps.logStream ? { stream: deps.logStream } : settings.logFile !== null ? { file: settings.logFile } : {}),
    },
    // Slow clients cannot hold connections (./server-timeouts.ts): headers, the whole request,
    // idle keep-alive and silent sockets each have a limit.
    connectionTimeout: t.connectionTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    requestTimeout: t.requestTimeoutMs,
    http: { headersTimeout: t.headersTimeoutMs, requestTimeout: t.requestTimeoutMs, connectionsCheckingInterval: t.checkIntervalMs },
    genReqId: (req) => {
      const h = req.headers["x-request-id"];
      return typeof h === "string" && REQUEST_ID_RE.test(h) ? h : randomUUID();
    },
    bodyLimit: BODY_LIMIT,
    // The client address (rate limits, the request log) through these proxies only (WRIT_TRUST_PROXY).
    trustProxy: typeof settings.trustProxy === "number" ? trustHops(settings.trustProxy) : settings.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    // Errors the router raises before any route or hook runs (a malformed percent-encoding, a
    // path parameter over the length limit) get the same {error} answer as every other error,
    // instead of Fastify's own {error, code, message, statusCode} body.
    frameworkErrors: (err, request, reply) => {
      reply.header("x-request-id", request.id);
      errorHandler(err, request, reply);
    },
    // A JSON body is validated as sent: no type coercion (Fastify's default coerces, so the
    // string "50.000000000000001" passed `amount: {type: "number"}` as 50). The path and the
    // query are text and keep it ("?limit=10" is the integer 10).
    schemaController: { compilersFactory: { buildValidator: bodiesAsSent() } },
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // Every JSON body is scanned as it arrives, before any parse: one nesting deeper than 32
  // levels or holding more than 1,000 arrays and objects is a 400 at once (./body-shape.ts),
  // on every route, authenticated or not, so no sender can make the parser stall the server.
  scanJsonBodies(app);
  // Global hooks are callback-style (no promise per request): they run on every request.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
  // I-JSON (RFC 7493) numbers: a JSON body holding a number a double cannot hold exactly (an
  // amount `50.000000000000001`, which JSON.parse reads as 50) is refused with a 400 naming it,
  // for every route (./well-formed-input.ts), so every amount a route reads is the one sent.
  const parseJson = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? "error", app.initialConfig.onConstructorPoisoning ?? "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    parseJson(request, text, (err, value) => {
      if (err) done(err, undefined);
      else done(inexactNumberError(text) ?? null, value);
    });
  });
  // I-JSON (RFC 7493): a lone surrogate ("\ud800") in any string of the path, the query or a
  // JSON body is refused here, for every route and before its schema, with a 400 naming the
  // field (./well-formed-input.ts): Postgres jsonb refuses such text, and a statement shared
  // with other requests (a group commit) must not be handed it.
  app.addHook("preValidation", (request, _reply, done) => {
    done(loneSurrogateError(request));
  });
  // Ajv coerces a query or path value such as "1e400" or "Infinity" to Infinity and then skips
  // the type and range checks, which hold only for finite numbers; and a decoded `%00` is text
  // no route can store or look up. Refuse both here, for every route (a JSON body cannot carry
  // a non-finite number; NUL inside JSON strings is answered 400 by the error handler).
  app.addHook("preHandler", (request, _reply, done) => {
    done(unusableMember("querystring", request.query) ?? unusableMember("params", request.params));
  });
  // Graceful close: Node closes only the connections idle at that moment; a response finished
  // while closing asks its client to hang up, so no keep-alive connection holds close() open.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });

  const ownsPool = deps.pool === undefined;
  // An idle connection the server closed: the pool replaces it on the next query. Expected while
  // Postgres stops (Ctrl-C) or this app closes, so then not a warning; never a stack trace.
  const onError = (err: Error) => {
    const expected = closing || (err as { code?: unknown }).code === ADMIN_SHUTDOWN;
    app.log[expected ? "debug" : "warn"]({ error: err.message }, "idle database connection failed");
  };
  const pool =
    deps.pool !== undefined
      ? deps.pool
      : settings.databaseUrl
        ? createPool(settings.databaseUrl, { onError, ...(settings.synchronousCommit ? { synchronousCommit: settings.synchronousCommit } : {}) })
        : null;
  const ownsReadPool = deps.readPool === undefined && settings.databaseReadUrl !== null;
  const readPool =
    deps.readPool !== undefined
      ? deps.readPool
      : settings.databaseReadUrl
        ? createPool(settings.databaseReadUrl, { onError, applicationName: "writ-read" })
        : pool;
  app.decorate("settings", settings);
  app.decorate("clock", deps.clock ?? (() => new Date()));
  app.decorate("revocationLog", deps.appendRevocationToLog ?? appendRevocationToLog);

  void app.register(dbPlugin, { pool, ownsPool, readPool, ownsReadPool, schemaReady: deps.schemaReady ?? true });
  void app.register(changesPlugin); // the LISTEN connection: revocations and change notices (started by the verify runtime)
  void app.register(keysPlugin, { settings });
  void app.register(metricsPlugin, { route: settings.metricsPort === null, ...(deps.metricsRegistry ? { registry: deps.metricsRegistry } : {}) });
  void app.register(openapiPlugin);
  void app.register(healthPlugin);
  void app.register(authPlugin); // registry credentials: app.authenticate, requireAdmin, requireScope
  void app.register(webhooksPlugin); // the webhook delivery worker: starts on ready, stops in preClose
  void app.register(retentionPlugin); // pruning of old decisions, deliveries, sign-in tokens and sessions
  void app.register(verifyRuntimePlugin); // the revocation index and record cache: start on ready, stop in preClose
  for (const area of ROUTE_AREAS) void app.register(area);
  return app;
}
