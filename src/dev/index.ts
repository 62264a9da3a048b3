/**
 * `writ dev`: a complete local data plane in one command.
 *
 * Starts an embedded Postgres with its data under `.writ/pg` in the current folder
 * (initialised on first run, reused after; port WRIT_PG_PORT or a free one), generates on first
 * run and keeps in `.writ/dev-settings.json` (mode 0600) the dev secrets (see dev-settings.ts),
 * creates the database `writ`, applies migrations, serves on HOST:PORT (default
 * 127.0.0.1:8080), and prints the URL and the secrets. On SIGINT (Ctrl-C) or SIGTERM it closes
 * the server (in-flight requests finish) and then stops Postgres, and exits 0; a second signal
 * exits at once (status 1). A signal during start-up (./shutdown.ts: handled from before this
 * module loads) is acted on between the steps, each of which finishes (initdb, a migration): the
 * start-up goes no further, what started is stopped, Postgres included, and the exit is 0.
 *
 * Defaults it adds unless the environment sets them: BUR_DEV_MAILBOX=1, BUR_ALLOW_DEMO_SEED=1.
 * With the latter it seeds the public demo data at start (./demo-seed.ts) and prints a curl
 * for a verify that answers ALLOW.
 * The generated secrets and DATABASE_URL always win over the environment.
 *
 * Local manifests (./dev-manifests.ts, src/sources/local): the folder WRIT_MANIFESTS_DIR
 * (default `.writ/samples`, fresh samples rendered there once per workspace; `off`: none) is
 * applied and watched after start, and the
 * controller's reconcilers store it in the dev database, printing one line per Ready change.
 * The Kubernetes revocation watch is off unless WRIT_KUBE_WATCH says otherwise. A webhook
 * receiver on 127.0.0.1 (./webhook-receiver.ts; port 8089 when free) takes the sample
 * Subscription's deliveries, checks their signatures and logs them to `.writ/webhooks.log`.
 *
 * Note: Ctrl-C in a terminal signals the whole foreground process group, so Postgres (a child)
 * receives it too and starts its own fast shutdown at the same moment; requests in flight at
 * that instant may then fail. A SIGTERM sent to the writ process alone keeps the strict order.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, rm } from "node:fs/promises";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import { loadSettings } from "../api/settings.js";
import { refusedSettings, startServer, type RunningServer } from "../api/server.js";
import { migrate } from "../store/index.js";
import { seedDevDemo } from "./demo-seed.js";
import { startDevManifests } from "./dev-manifests.js";
import { devSecretsEnv, loadOrCreateDevSecrets } from "./dev-settings.js";
import { freePort, portInUse } from "./free-port.js";
import { startPostgres, stopStalePostgres, type RunningPostgres } from "./postgres.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";
import { claimDevFolder, runningDevProcess } from "./dev-lock.js";
import { devShutdownRequest, type ShutdownRequest } from "./shutdown.js";

/** The database `writ dev` serves from. */
export const DEV_DATABASE = "writ";

function pgPort(env: NodeJS.ProcessEnv): Promise<number> {
  const raw = env.WRIT_PG_PORT?.trim();
  if (!raw) return freePort();
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) {
    throw new Error("WRIT_PG_PORT must be a port number from 1 to 65535");
  }
  return Promise.resolve(Number(raw));
}

/** How `writ dev` runs: its folder, environment, and whether it starts from an empty workspace. */
export interface DevOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `--reset`: remove `.writ` (database, secrets, samples) before starting. */
  reset?: boolean;
  /** The shutdown signal handlers, when the caller installed them earlier (default: installed now). */
  shutdown?: ShutdownRequest;
}

/** Runs `writ dev` in folder `cwd` until a signal; returns the exit status. */
export async function devCommand({ cwd, env, reset = false, shutdown = devShutdownRequest() }: DevOptions): Promise<number> {
  const root = resolve(cwd, ".writ");
  const probe = loadSettings(env);
  if (refusedSettings("writ dev", probe.problems)) return 2;
  // A signal during start-up is acted on between its steps (each one finishes: an initdb or a
  // migration is never cut in half): what started so far is stopped, Postgres included; exit 0.
  const stopNow = () => shutdown.received() !== null;
  const stoppedEarly = () => {
    console.log(`writ dev: ${shutdown.received()} before start-up: nothing was started\nwrit dev: stopped`);
    return 0;
  };
  // An earlier `writ dev` here: still running (refused), or killed with its Postgres left behind (stopped).
  const running = await runningDevProcess(root);
  if (running !== null) {
    console.error(`writ dev: another writ dev (pid ${running}) is running in ${cwd}; stop it first (kill ${running})`);
    return 1;
  }
  const stale = await stopStalePostgres(join(root, "pg"));
  if (stale !== null) console.log(`writ dev: stopped the Postgres (pid ${stale}) an earlier writ dev left running in ${root}`);
  if (stopNow()) return stoppedEarly();
  if (reset) {
    await rm(root, { recursive: true, force: true });
    console.log(`writ dev: --reset: removed ${root}; starting afresh`);
  }
  await mkdir(root, { recursive: true });
  // As root, Postgres runs as the `postgres` user, which must be able to enter .writ/.
  if (userInfo().uid === 0) await chmod(root, 0o711);
  const settingsFile = join(root, "dev-settings.json");
  const { secrets, created } = await loadOrCreateDevSecrets(settingsFile);
  // Before anything starts: a taken port stops here, with nothing to clean up.
  if (await portInUse(probe.host, probe.port)) {
    console.error(
      `writ dev: cannot serve on ${probe.host}:${probe.port}: the address is in use (EADDRINUSE). ` +
        `Stop what uses it, or choose another port: PORT=${probe.port === 65535 ? 8081 : probe.port + 1} npm start`,
    );
    return 1;
  }
  if (stopNow()) return stoppedEarly();
  const release = await claimDevFolder(root);

  // What has started so far, stopped in reverse order by `stopStarted`.
  let pg: RunningPostgres | null = null;
  let server: RunningServer | undefined;
  let receiver: WebhookReceiver | undefined;
  let manifests: Awaited<ReturnType<typeof startDevManifests>>;
  // Every step runs even when an earlier one fails (Postgres is always stopped); the first failure is thrown after.
  let stopping = false;
  const stopStarted = async (print = true) => {
    stopping = true;
    let failure: { error: unknown } | undefined;
    const step = async (line: string | null, run: (() => Promise<void>) | undefined) => {
      if (!run) return;
      if (line && print) console.log(line);
      await run().catch((error: unknown) => void (failure ??= { error }));
    };
    const [m, srv, rcv, db] = [manifests, server, receiver, pg];
    await step("writ dev: closing the server", srv && (async () => (await m?.stop(), await srv.close())));
    await step(null, rcv && (() => rcv.close()));
    await step("writ dev: stopping Postgres", db ? () => db.stop() : undefined);
    await step(null, release);
    if (failure) throw failure.error;
    if (print) console.log("writ dev: stopped");
    return 0;
  };
  const stopDuringStart = () => {
    console.log(`writ dev: ${shutdown.received()} during start-up: not serving; stopping what started`);
    return stopStarted();
  };
  try {
    const dataDir = join(root, "pg");
    console.log(`writ dev: starting Postgres (data in ${dataDir}${existsSync(join(dataDir, "PG_VERSION")) ? "" : "; initialising it first takes a while"})`);
    pg = await startPostgres({
      dataDir,
      port: await pgPort(env),
      password: secrets.postgres_password,
      onLog: env.LOG_LEVEL === "debug" || env.LOG_LEVEL === "trace" ? (l) => process.stderr.write(l) : undefined,
    });
    if (stopNow()) return await stopDuringStart();
    console.log(`writ dev: Postgres is up on 127.0.0.1:${pg.port} (pid ${pg.pid ?? "unknown"}); migrating and seeding`);
    await pg.ensureDatabase(DEV_DATABASE);
    const databaseUrl = pg.url(DEV_DATABASE);
    const settings = loadSettings({
      BUR_DEV_MAILBOX: "1",
      BUR_ALLOW_DEMO_SEED: "1",
      WRIT_KUBE_WATCH: "off",
      // Request logs go to a file, not between the banner's lines.
      WRIT_LOG_FILE: join(root, "writ.log"),
      // Local webhook receivers, key servers and rate sources are on this machine.
      WRIT_OUTBOUND_ALLOW_LOOPBACK: "1",
      ...env,
      ...devSecretsEnv(secrets),
      DATABASE_URL: databaseUrl,
    });
    const applied = await migrate(databaseUrl);
    if (stopNow()) return await stopDuringStart();
    server = await startServer(settings, { migrate: false });
    if (stopNow()) return await stopDuringStart();
    const kid = server.app.logSigner?.kid ?? "(none)";
    const demo = await seedDevDemo(server.app, server.url, new Date());
    if (stopNow()) return await stopDuringStart();
    receiver = await startWebhookReceiver({
      logFile: join(root, "webhooks.log"),
      publicJwk: server.app.logSigner ? { ...server.app.logSigner.publicJwk } : undefined,
      print: (line) => console.log(`writ dev: ${line}`),
    }).catch((e: unknown) => {
      console.error(`writ dev: webhook receiver not started: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    });
    if (stopNow()) return await stopDuringStart();
    console.log(
      [
        "",
        `writ dev: serving ${server.url}  (${created ? "new workspace" : "reusing"} ${root})`,
        `  DATABASE_URL=${databaseUrl}`,
        `  migrations applied now: ${applied.length ? applied.join(", ") : "none (up to date)"}`,
        `  SVC_APPEND_TOKEN=${secrets.append_token}`,
        `  SVC_LOG_SIGNING_SEED=${secrets.log_signing_seed}   (log key kid ${kid})`,
        `  BUR_ADMIN_TOKEN=${secrets.admin_token}`,
        `  SVC_PUSH_NOTIFIER_JWK=${JSON.stringify(secrets.notifier.public_jwk)}`,
        `  notifier private key: ${settingsFile} (notifier.private_jwk)`,
        `  request log: ${settings.logFile ?? "standard output"}${settings.logFile ? `  (tail -f ${settings.logFile}; WRIT_LOG_FILE= to print it here)` : ""}`,
        ...demo,
        ...(receiver
          ? [`  webhook receiver: ${receiver.url}  (the sample Subscription delivers here; signatures checked, deliveries logged to ${receiver.logFile})`]
          : []),
        "  Ctrl-C stops the server, then Postgres.",
        "",
      ].join("\n"),
    );
    manifests = await startDevManifests(server.app, {
      databaseUrl,
      root,
      cwd,
      env,
      webhookUrl: receiver?.url,
      print: (line) => console.log(`writ dev: ${line}`),
    }).catch((e: unknown) => {
      console.error(`writ dev: local manifests failed to start: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    });
    console.log(`writ dev: ${await shutdown.signal}: shutting down`);
    return await stopStarted();
  } catch (e) {
    if (stopNow() && !stopping) {
      // Ctrl-C in a terminal signals Postgres (or initdb) too, and the step that used it fails:
      // that is the stop that was asked for.
      console.log(`writ dev: ${shutdown.received()} during start-up: ${e instanceof Error ? e.message : String(e)}`);
      return await stopDuringStart();
    }
    shutdown.remove();
    if (!stopping) await stopStarted(false).catch(() => {});
    throw e;
  }
}
