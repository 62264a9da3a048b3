import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { access, chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { signRevocation, type IntentAgreement } from "../../src/core/agreement/index.js";
import { DEMO_AGREEMENT_ID, demoPrincipalSigner } from "../../src/core/demo/index.js";
import { signerFromJwk } from "../../src/core/jose/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { stopStalePostgres } from "../../src/dev/postgres.js";
import { processCommandLine } from "../../src/dev/processes.js";
import { signPush } from "../helpers/revocation-push.js";

/** The demo principal's revocation of the demo agreement as `writ dev` seeded it (read from its database). */
async function demoRevocation(output: string) {
  const url = /DATABASE_URL=(\S+)/.exec(output)?.[1];
  expect(url).toBeDefined();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ record: IntentAgreement }>("SELECT record FROM agreements WHERE agreement_id = $1", [DEMO_AGREEMENT_ID]);
    const record = rows[0]?.record as IntentAgreement;
    return await signRevocation(record, { reason: "dev test", at: new Date().toISOString() }, demoPrincipalSigner());
  } finally {
    await client.end();
  }
}

const BIN = fileURLToPath(new URL("../../bin/writ.mjs", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let cwd: string;

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "writ-dev-test-"));
  await chmod(cwd, 0o755); // as root, Postgres runs as "postgres" and must enter the folder
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

function spawnDev(dir: string, port: number, ...args: string[]) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: String(port), LOG_LEVEL: "info" };
  return spawn(process.execPath, [BIN, "dev", ...args], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * What `npm start` runs (package.json's `start` script), its program and files made absolute so
 * that it runs in another folder: the process a SIGTERM meant for `writ dev` is sent to.
 */
async function npmStartCommand(): Promise<[string, ...string[]]> {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  const [program = "", ...args] = pkg.scripts.start.trim().split(/\s+/);
  return [
    program === "node" ? process.execPath : join(ROOT, "node_modules", ".bin", program),
    ...args.map((a) => (existsSync(join(ROOT, a)) ? join(ROOT, a) : a)),
  ];
}

/** The id of a live process that `dir`'s `.writ/pg/postmaster.pid` names, or null (no Postgres of that data folder runs). */
async function postgresOf(dir: string): Promise<number | null> {
  const text = await readFile(join(dir, ".writ", "pg", "postmaster.pid"), "utf8").catch(() => null);
  const pid = Number(text?.split("\n", 1)[0]);
  return Number.isSafeInteger(pid) && pid > 0 && (await processCommandLine(pid)) !== null ? pid : null;
}

/**
 * Runs `npm start`'s command in `dir` and sends it `signal` the moment its output shows `marker`
 * (at most 90 s: failing, not hanging, when the marker never comes); `group`: to its whole process
 * group, Postgres included, as Ctrl-C in a terminal does (it runs in a group of its own). Resolves
 * once it exited; the contents of `.writ/dev.pid` (the writ process) at the moment of the signal.
 */
async function signalAt(dir: string, marker: string, signal: NodeJS.Signals, to: "process" | "group" = "process") {
  const [program, ...args] = await npmStartCommand();
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: String(await freePort()), LOG_LEVEL: "info" };
  const child = spawn(program, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"], detached: to === "group" });
  let out = "";
  let devPid: string | null = null;
  let sent = false;
  const onData = (b: Buffer) => {
    out += b.toString();
    if (sent || !out.includes(marker)) return;
    sent = true;
    devPid = readFileSync(join(dir, ".writ", "dev.pid"), "utf8").trim();
    if (to === "group" && child.pid !== undefined) process.kill(-child.pid, signal);
    else child.kill(signal);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once("exit", (code, sig) => r({ code, signal: sig })));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), 90_000)));
  const ended = await Promise.race([exit, late]);
  clearTimeout(timer);
  if (ended === null) {
    child.kill("SIGKILL");
    await exit;
  }
  return { sent, ended, output: out, devPid, pid: child.pid };
}

async function runDev(dir = cwd, ...args: string[]) {
  const port = await freePort();
  const child = spawnDev(dir, port, ...args);
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const url = `http://127.0.0.1:${port}`;
  await expect.poll(() => out.includes(`serving ${url}`), { timeout: 60_000, interval: 100 }).toBe(true);
  return { url, output: () => out, stop: async () => (child.kill("SIGTERM"), exited), child, exited };
}

describe("writ dev", () => {
  it("initialises .writ, serves with generated settings, stops cleanly, and reuses both on restart", async () => {
    const first = await runDev();
    const file = join(cwd, ".writ", "dev-settings.json");
    let sequence: unknown;
    try {
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const secrets = JSON.parse(await readFile(file, "utf8"));
      expect(first.output()).toContain(secrets.admin_token);
      const notifier = signerFromJwk(secrets.notifier.private_jwk);
      const r = await fetch(`${first.url}/v1/revocations/push`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(await signPush(await demoRevocation(first.output()), notifier)),
      });
      const body = (await r.json()) as { stored: boolean; sequence: number };
      expect(body.stored).toBe(true);
      sequence = body.sequence;
      const keys = (await (await fetch(`${first.url}/.well-known/svc-keys.json`)).json()) as { keys: unknown[] };
      expect(keys.keys).toHaveLength(1);
      // The webhook receiver: in the banner, running, and where the rendered sample Subscription delivers.
      const receiver =
        /webhook receiver: (http:\/\/127\.0\.0\.1:\d+\/writ\/alerts) +\(the sample Subscription delivers here; signatures checked, deliveries logged to (\S+)\)/.exec(
          first.output(),
        );
      expect(receiver?.[2]).toBe(join(cwd, ".writ", "webhooks.log"));
      const receiverUrl = receiver?.[1] ?? "";
      expect((await fetch(receiverUrl)).status).toBe(405);
      const subscription = join(cwd, ".writ", "samples", "writ.dev_v1alpha1_subscription.yaml");
      await expect.poll(() => readFile(subscription, "utf8").catch(() => ""), { timeout: 30_000, interval: 100 }).toContain(`webhookUrl: ${receiverUrl}\n`);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(first.output()).toContain("stopped");
    // Request logs went to .writ/writ.log, not between the banner's lines.
    expect(first.output()).toContain(`request log: ${join(cwd, ".writ", "writ.log")}`);
    expect(first.output()).not.toContain('"msg":"incoming request"');
    expect(await readFile(join(cwd, ".writ", "writ.log"), "utf8")).toContain('"url":"/v1/revocations/push"');
    // The banner says what each public demo key may do.
    expect(first.output()).toMatch(/demo operator key: +bur_\S+ +\(keys:write, agents:write, registry:read, verify\)/);

    const second = await runDev();
    try {
      const list = (await (await fetch(`${second.url}/v1/revocations`)).json()) as { revocations: { sequence: number }[] };
      expect(list.revocations.map((x) => x.sequence)).toEqual([sequence]);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 120_000); // a fresh initdb and two starts: near the default 30 s on a busy machine, over it at times

  it("one Ctrl-C delivered twice (the terminal and npm both forward it) stops cleanly, with no 'second signal'", async () => {
    const dev = await runDev();
    dev.child.kill("SIGINT");
    dev.child.kill("SIGINT");
    expect(await dev.exited).toBe(0);
    expect(dev.output()).toContain("writ dev: stopped");
    expect(dev.output()).not.toContain("second signal");
  });

  it("a port in use: exits at once with status 1 and a clear message, starting nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-dev-busy-"));
    const busy = createServer();
    await new Promise<void>((r) => busy.listen({ host: "127.0.0.1", port: 0 }, r));
    const port = (busy.address() as { port: number }).port;
    try {
      const child = spawnDev(dir, port);
      let out = "";
      child.stdout.on("data", (b: Buffer) => (out += b.toString()));
      child.stderr.on("data", (b: Buffer) => (out += b.toString()));
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      expect(code).toBe(1);
      expect(out).toContain(`cannot serve on 127.0.0.1:${port}: the address is in use (EADDRINUSE)`);
      expect(out).not.toContain("serving");
      // Postgres was never started: no data folder.
      await expect(access(join(dir, ".writ", "pg"))).rejects.toThrow();
    } finally {
      busy.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a killed writ dev's Postgres is stopped by the next start (one line); a running one is refused; --reset starts afresh", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-dev-stale-"));
    await chmod(dir, 0o755);
    try {
      const first = await runDev(dir);
      const pgPid = Number((await readFile(join(dir, ".writ", "pg", "postmaster.pid"), "utf8")).split("\n")[0]);
      const token = JSON.parse(await readFile(join(dir, ".writ", "dev-settings.json"), "utf8")).admin_token as string;

      // A second writ dev in the same folder while the first runs: refused, the first unharmed.
      const twin = spawnDev(dir, await freePort());
      let twinOut = "";
      twin.stderr.on("data", (b: Buffer) => (twinOut += b.toString()));
      expect(await new Promise<number | null>((r) => twin.once("exit", (c) => r(c)))).toBe(1);
      expect(twinOut).toContain(`another writ dev (pid ${first.child.pid}) is running`);
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

      // A killed terminal: the node process dies at once, its Postgres is left running.
      first.child.kill("SIGKILL");
      await first.exited;
      expect(await processCommandLine(pgPid)).not.toBeNull();

      const second = await runDev(dir);
      expect(second.output()).toContain(`stopped the Postgres (pid ${pgPid}) an earlier writ dev left running`);
      expect(await processCommandLine(pgPid)).toBeNull();
      expect(second.output()).toContain(token); // the workspace is reused
      expect(await second.stop()).toBe(0);

      const third = await runDev(dir, "--reset");
      expect(third.output()).toContain("--reset: removed");
      expect(third.output()).toContain("new workspace");
      expect(third.output()).not.toContain(token);
      expect(await third.stop()).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000); // three starts, two of them a fresh initdb and every migration: longer than the default 30 s on a busy machine

  it("a SIGTERM or SIGINT to what npm start runs, at any point of the start-up, exits 0 and leaves no Postgres of its data folder", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-dev-signal-"));
    await chmod(dir, 0o755);
    try {
      // Before Postgres is up (a new folder: while initdb runs): the start-up goes no further.
      const early = await signalAt(dir, "writ dev: starting Postgres", "SIGTERM");
      expect(early.sent).toBe(true);
      expect(early.ended).toEqual({ code: 0, signal: null });
      expect(early.output).toContain("SIGTERM during start-up: not serving");
      expect(early.output).not.toContain("writ dev: serving");
      expect(await postgresOf(dir)).toBeNull();

      // Postgres up, the migrations running (the first run above stopped before them): Ctrl-C's
      // SIGINT, which Postgres gets too (the step under way fails: that is the stop asked for).
      const migrating = await signalAt(dir, "migrating and seeding", "SIGINT", "group");
      expect(migrating.sent).toBe(true);
      expect(migrating.ended).toEqual({ code: 0, signal: null });
      expect(migrating.output).not.toContain("writ dev: serving");
      expect(migrating.output).toContain("writ dev: stopped");
      const pgPid = Number(/Postgres is up on \S+ \(pid (\d+)\)/.exec(migrating.output)?.[1]);
      expect(pgPid).toBeGreaterThan(0);
      expect(await processCommandLine(pgPid)).toBeNull();
      expect(await postgresOf(dir)).toBeNull();

      // Right at the `serving` line. npm start's process is writ itself (it owns .writ/dev.pid):
      // no wrapper between them that could relay the signal late or SIGKILL writ.
      const serving = await signalAt(dir, "writ dev: serving", "SIGTERM");
      expect(serving.sent).toBe(true);
      expect(serving.devPid).toBe(String(serving.pid));
      expect(serving.ended).toEqual({ code: 0, signal: null });
      expect(serving.output).toContain("writ dev: stopped");
      expect(await postgresOf(dir)).toBeNull();
    } finally {
      // A failed run's leftovers, by the pid its postmaster.pid names: stopped before the folder goes.
      await stopStalePostgres(join(dir, ".writ", "pg")).catch(() => null);
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000); // a fresh initdb and three starts on a shared, slow machine
});
