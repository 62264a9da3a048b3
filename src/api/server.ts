/**
 * Running the data plane as a process (`writ serve`).
 *
 * Promise: `startServer` listens at once (so /healthz answers while the database is still
 * coming up), applies migrations in the background when DATABASE_URL is set (retrying with
 * backoff while Postgres is unreachable; storage routes answer 503 until they are applied), and
 * on SIGTERM or SIGINT shuts down gracefully: stop accepting, let in-flight requests finish
 * (Fastify answers 503 to requests arriving meanwhile), close idle keep-alive connections, then
 * close the pool. A second signal, or the shutdown timeout, exits at once with status 1.
 */
import type { FastifyInstance } from "fastify";
import { migrateWhenReachable } from "../store/index.js";
import { settingRefusals } from "../core/env/index.js";
import { buildApp, type AppDeps } from "./app.js";
import { loadSettings, type Settings } from "./settings.js";
import { onShutdownSignals } from "./signals.js";
import { startHealthServer, type HealthServer } from "../metrics/index.js";

/** A listening server. */
export interface RunningServer {
  readonly app: FastifyInstance;
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** URL of the separate metrics server (METRICS_PORT), or null when /metrics is on `url`. */
  readonly metricsUrl: string | null;
  /** Resolves when start-up migrations are applied (at once without a database). */
  readonly migrated: Promise<void>;
  /** Graceful close (idempotent). */
  close(): Promise<void>;
  /** Resolves once the server has closed (after `close()` or a handled signal). */
  readonly closed: Promise<void>;
}

/** Options of `startServer`. */
export interface StartOptions {
  deps?: AppDeps;
  /** Apply migrations at start-up when the app owns a database (default true). */
  migrate?: boolean;
  /** Install SIGTERM/SIGINT handlers that close the server (default false). */
  handleSignals?: boolean;
  /** Longest graceful shutdown before a forced exit (default 10 s). */
  shutdownTimeoutMs?: number;
}

async function migrateWithRetry(app: FastifyInstance, databaseUrl: string, isClosing: () => boolean): Promise<void> {
  let ran: string[] | null;
  try {
    ran = await migrateWhenReachable(
      databaseUrl,
      {
        info: (msg) => app.log.debug(msg),
        unreachable: (err, wait) =>
          app.log.warn({ error: err instanceof Error ? err.message : String(err), retry_in_ms: wait }, "database unreachable; migrations will be retried"),
      },
      isClosing,
    );
  } catch (err) {
    app.log.error({ err }, "migrations failed");
    throw err;
  }
  if (ran === null) return;
  if (ran.length > 0) app.log.info({ migrations: ran }, "migrations applied");
  app.markSchemaReady();
}

/** Builds the app from `settings`, listens on settings.host:settings.port, migrates. */
export async function startServer(settings: Settings, opts: StartOptions = {}): Promise<RunningServer> {
  const runMigrations = (opts.migrate ?? true) && settings.databaseUrl !== null && opts.deps?.pool === undefined;
  const app = buildApp(settings, { ...opts.deps, schemaReady: !runMigrations && (opts.deps?.schemaReady ?? true) });
  for (const problem of settings.problems) app.log.warn({ problem }, "setting did not load");
  let address: string;
  try {
    address = await app.listen({ host: settings.host, port: settings.port });
  } catch (err) {
    // Nothing may keep running when the port cannot be had (workers, the LISTEN connection).
    await app.close().catch(() => {});
    throw err;
  }
  let metrics: HealthServer | null = null;
  if (settings.metricsPort !== null) {
    try {
      metrics = await startHealthServer({ host: settings.metricsHost, port: settings.metricsPort, registry: app.metrics.registry });
    } catch (err) {
      await app.close().catch(() => {});
      throw err;
    }
  }
  let closing: Promise<void> | null = null;
  const migrated = runMigrations && settings.databaseUrl ? migrateWithRetry(app, settings.databaseUrl, () => closing !== null) : Promise.resolve();
  migrated.catch(() => {}); // reported in the log; readiness stays 503
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const close = () =>
    (closing ??= app.close().then(async () => {
      await metrics?.close();
      markClosed();
    }));

  if (opts.handleSignals) {
    const timeoutMs = opts.shutdownTimeoutMs ?? 10_000;
    const onSignal = (signal: NodeJS.Signals) => {
      app.log.info({ signal }, "shutting down");
      const force = setTimeout(() => {
        app.log.error("graceful shutdown timed out: exiting");
        process.exit(1);
      }, timeoutMs);
      force.unref();
      close().then(
        () => {
          removeSignals();
          app.log.info("server closed");
        },
        (err: unknown) => {
          app.log.error({ err }, "shutdown failed");
          process.exitCode = 1;
        },
      );
    };
    const removeSignals = onShutdownSignals({
      first: onSignal,
      again: (signal) => {
        app.log.warn({ signal }, "second signal: exiting now");
        process.exit(1);
      },
    });
  }
  return { app, url: address, metricsUrl: metrics?.url ?? null, migrated, close, closed };
}

/** Prints the refusals of settings that did not load (settingRefusals); true when there were any. */
export function refusedSettings(command: string, problems: readonly string[]): boolean {
  for (const line of settingRefusals(command, problems)) console.error(line);
  return problems.length > 0;
}

/** `writ serve`: settings from the environment, signals handled; resolves when closed. */
export async function serveCommand(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const settings = loadSettings(env);
  if (refusedSettings("writ serve", settings.problems)) return 2;
  const server = await startServer(settings, { handleSignals: true });
  let code = 0;
  server.migrated.catch(() => {
    code = 1;
    void server.close();
  });
  await server.closed;
  return code;
}
