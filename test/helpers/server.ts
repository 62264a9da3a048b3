/**
 * The data-plane app on a real HTTP socket (127.0.0.1, port 0) for integration tests.
 *
 * `env` is the whole environment the settings are read from (nothing is inherited from the
 * test process); LOG_LEVEL defaults to silent and WRIT_OUTBOUND_ALLOW_LOOPBACK to 1 (local
 * webhook receivers, key servers and rate sources listen on 127.0.0.1). Pass `deps.pool` to share a test database's
 * pool (the app then does not close it) or leave DATABASE_URL in `env` to let the app own one.
 */
import type { FastifyInstance } from "fastify";
import { buildApp, type AppDeps } from "../../src/api/app.js";
import { loadSettings, type Settings } from "../../src/api/settings.js";

/** A listening test server. */
export interface TestServer {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  readonly app: FastifyInstance;
  readonly settings: Settings;
  close(): Promise<void>;
}

/** Builds the app from `env` and listens on 127.0.0.1:0. */
export async function startTestServer(env: Record<string, string> = {}, deps: AppDeps = {}): Promise<TestServer> {
  const settings = loadSettings({ LOG_LEVEL: "silent", WRIT_OUTBOUND_ALLOW_LOOPBACK: "1", ...env });
  const app = buildApp(settings, deps);
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  let closing: Promise<void> | null = null;
  return { url: address, app, settings, close: () => (closing ??= app.close()) };
}
