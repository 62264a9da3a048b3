/**
 * The reconcilers of local manifests (src/sources/local) in `writ dev`: the controller
 * (`startController`) with the source's in-memory API server as its client, storing in the dev
 * database (migrated by the caller). Its log reaches `print` as lines: warnings and errors only.
 */
import type { Signer } from "../core/jose/index.js";
import type { Logger } from "../controller/log.js";
import { startController, type ControllerHandle } from "../controller/manager.js";
import { loadControllerSettings } from "../controller/settings.js";
import type { LocalApiServer } from "../sources/local/index.js";

/** Options of `localController`. */
export interface LocalControllerOptions {
  /** Postgres the reconcilers store in (migrated by the caller). */
  databaseUrl: string;
  /** Signs the log heads of agreement entries (the dev server's log key). */
  logSigner: Signer | undefined;
  logOrigin?: string;
  /** Where the controller's warnings and errors go, one line each. */
  print(line: string): void;
  /** Reconcile workers per kind (default 2). */
  workers?: number;
}

/** The controller's log as lines: warnings and errors only. */
function lineLogger(print: (line: string) => void): Logger {
  const line = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    print(`controller ${level}: ${msg}${fields ? ` ${JSON.stringify(fields)}` : ""}`);
  return { debug: () => {}, info: () => {}, warn: line("warning"), error: line("error") };
}

/** `startReconcilers` of `startLocalManifests`: starts the controller on the local API server. */
export function localController(opts: LocalControllerOptions): (api: LocalApiServer) => Promise<ControllerHandle> {
  return (api) => {
    const settings = loadControllerSettings({
      DATABASE_URL: opts.databaseUrl,
      HOST: "127.0.0.1",
      PORT: "0",
      WRIT_CONTROLLER_WORKERS: String(opts.workers ?? 2),
      ...(opts.logOrigin ? { WRIT_LOG_ORIGIN: opts.logOrigin } : {}),
    });
    return startController({ ...settings, logSigner: opts.logSigner }, { client: api, skipMigrations: true, log: lineLogger(opts.print) });
  };
}
