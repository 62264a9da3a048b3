import { spawn } from "node:child_process";
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
let cwd: string;

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "writ-dev-test-"));
  await chmod(cwd, 0o755); // as root, Postgres runs as "postgres" and must enter the folder
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

function spawnDev(dir: string, port: number) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: String(port), LOG_LEVEL: "info" };
  return spawn(process.execPath, [BIN, "dev"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
}

async function runDev() {
  const port = await freePort();
  const child = spawnDev(cwd, port);
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
  });

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
});
