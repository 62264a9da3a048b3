/** The `writ` executable as a child process: help and exit statuses through bin/writ.mjs. */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../../../bin/writ.mjs", import.meta.url));
const run = (env: Record<string, string>, ...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", ...env } });
const writ = (...args: string[]) => run({}, ...args);

describe("bin/writ.mjs", () => {
  it("--help lists every command and exits 0", () => {
    const r = writ("--help");
    expect(r.status).toBe(0);
    for (const c of ["serve", "dev", "migrate", "keys", "agreement", "delegation", "mandate", "log", "verify", "inquire"])
      expect(r.stdout).toMatch(new RegExp(`^  ${c} `, "m"));
  });

  it("a verb's --help exits 0; bad usage exits 2; a refused secret flag exits 2", () => {
    const help = writ("log", "verify", "--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: writ log verify");
    expect(writ("log", "verify").status).toBe(2);
    const secret = writ("inquire", "--token", "t0psecret");
    expect(secret.status).toBe(2);
    expect(secret.stderr).toContain("--token is refused");
  });

  it("serve, dev and migrate: --help prints their usage and starts nothing; an unknown or bad flag exits 2", async () => {
    const { mkdtempSync, readdirSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "writ-help-"));
    try {
      for (const verb of ["serve", "dev", "migrate"]) {
        const r = spawnSync(process.execPath, [bin, verb, "--help"], { cwd: dir, encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "" } });
        expect([verb, r.status, r.stderr]).toEqual([verb, 0, ""]);
        expect(r.stdout).toContain(`usage: writ ${verb}`);
        const bad = spawnSync(process.execPath, [bin, verb, "--prot", "9000"], {
          cwd: dir,
          encoding: "utf8",
          timeout: 30_000,
          env: { PATH: process.env.PATH ?? "" },
        });
        expect([verb, bad.status]).toEqual([verb, 2]);
        expect(bad.stderr).toContain("--prot");
      }
      // `dev --help` created nothing (no .writ, no Postgres) in the folder it ran in.
      expect(readdirSync(dir)).toEqual([]);
      expect(writ("serve", "--port", "99999").stderr).toContain("--port must be a port number from 1 to 65535");
      expect(writ("migrate", "--port", "9000").status).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writ controller without any kubeconfig: one clear error at once, not a retry loop", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const home = mkdtempSync(join(tmpdir(), "writ-home-"));
    try {
      // The database is never reached: the kubeconfig is checked first.
      const r = run({ HOME: home, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" }, "controller");
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(
        "writ controller: no kubeconfig: set KUBECONFIG, create ~/.kube/config, or run in a cluster (KUBERNETES_SERVICE_HOST and a service account)",
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("settings fail fast: an invalid value stops serve, dev and controller at start, naming the variable and what it accepts", () => {
    for (const verb of ["serve", "dev", "controller"]) {
      const r = run({ LOG_LEVEL: "loud", WRIT_OUTBOUND_ALLOW_LOOPBACK: "yes", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" }, verb);
      expect([verb, r.status]).toEqual([verb, 2]);
      const refusal = verb === "controller" ? "LOG_LEVEL must be one of debug, info, warn, error" : "WRIT_OUTBOUND_ALLOW_LOOPBACK must be 0 or 1";
      expect(r.stderr).toContain(`writ ${verb}: ${refusal}\n`);
    }
  });

  it("--version prints the package's version and the Node version", async () => {
    const { readFileSync } = await import("node:fs");
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string };
    const r = writ("--version");
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(`writ ${pkg.version} (node ${process.version})`);
  });

  it("WRIT_RUN_FROM picks src or dist, and anything else is bad usage (exit 2)", () => {
    expect(run({ WRIT_RUN_FROM: "src" }, "--help").status).toBe(0);
    const bad = run({ WRIT_RUN_FROM: "build" }, "--help");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('WRIT_RUN_FROM must be "src" or "dist"');
  });

  it("a failed check exits 1", () => {
    const r = writ("log", "verify", "--bundle", "/nonexistent/bundle.json");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("no such file");
  });
});
