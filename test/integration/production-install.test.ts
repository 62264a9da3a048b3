/**
 * The image's steps (Dockerfile) without a container engine: a clean folder with the package
 * files and bin/, the compiled output of `npm run build` as dist/, and `npm ci --omit=dev`
 * (from the npm cache where it can). From that folder `writ --help` answers and `writ serve`
 * migrates an empty database and answers /readyz 200, while neither tsx nor src/ is there:
 * production runs the compiled JavaScript.
 */
import { execFile, spawnSync } from "node:child_process";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startServeProcess } from "../helpers/serve-process.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const STEP_TIMEOUT_MS = 150_000;

let dir: string;
let db: TestDatabase;

beforeAll(
  async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-production-"));
    db = await createTestDatabase({ migrate: false });
    for (const f of ["package.json", "package-lock.json", "bin"]) await cp(join(REPO, f), join(dir, f), { recursive: true });
    // The build stage: `npm run build` with its output in the folder (the checkout's dist/ may be stale).
    await run(process.execPath, ["--import", "tsx", "hack/build/main.ts", "--out", join(dir, "dist")], { cwd: REPO, timeout: STEP_TIMEOUT_MS });
    // The runtime stage: production dependencies only.
    await run("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir, timeout: STEP_TIMEOUT_MS });
  },
  2 * STEP_TIMEOUT_MS + 10_000,
);

afterAll(async () => {
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `node bin/writ.mjs ...args` in the production folder, with only PATH and HOME. */
function writ(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(dir, "bin", "writ.mjs"), ...args], {
    cwd: dir,
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
  });
}

describe("a production install (npm ci --omit=dev + dist/)", () => {
  it("holds the compiled CLI, the migrations and the SQL functions, and neither tsx, typescript nor src/", async () => {
    expect(existsSync(join(dir, "dist", "cli", "main.js"))).toBe(true);
    const sql = (await readdir(join(REPO, "src", "store", "migrations"))).filter((f) => f.endsWith(".sql"));
    expect(sql.length).toBeGreaterThan(0);
    expect((await readdir(join(dir, "dist", "store", "migrations"))).sort()).toEqual(sql.sort());
    const functions = (await readdir(join(REPO, "src", "store", "sql", "functions"))).filter((f) => f.endsWith(".sql"));
    expect(functions.length).toBeGreaterThan(0);
    expect((await readdir(join(dir, "dist", "store", "sql", "functions"))).sort()).toEqual(functions.sort());
    for (const absent of ["src", "node_modules/tsx", "node_modules/typescript", "node_modules/esbuild", "node_modules/.bin/tsx"]) {
      expect(existsSync(join(dir, absent)), absent).toBe(false);
    }
  });

  it("runs `writ --help` from dist/; the sources path is refused there for want of tsx", () => {
    const help = writ(["--help"]);
    expect(help.stderr).toBe("");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}serve /m);
    const fromSrc = writ(["--help"], { WRIT_RUN_FROM: "src" });
    expect(fromSrc.status).toBe(2);
    expect(fromSrc.stderr).toContain("needs tsx");
  });

  it("`writ serve` migrates an empty database and answers /readyz 200", async () => {
    const p = await startServeProcess({ root: dir, env: { DATABASE_URL: db.url } });
    try {
      await expect.poll(async () => (await fetch(`${p.url}/readyz`)).status, { timeout: 30_000, interval: 100 }).toBe(200);
      expect(await (await fetch(`${p.url}/readyz`)).json()).toEqual({ status: "ok", database: "ok" });
      const r = await fetch(`${p.url}/v1/revocations`);
      expect(r.status).toBe(200);
      const { rows } = await db.pool.query<{ name: string }>("SELECT name FROM pgmigrations ORDER BY name");
      expect(rows.map((row) => `${row.name}.sql`)).toEqual((await readdir(join(dir, "dist", "store", "migrations"))).sort());
    } finally {
      expect(await p.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    }
  });
});
