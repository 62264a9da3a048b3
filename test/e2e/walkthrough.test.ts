/**
 * docs/getting-started/cluster.md ("Try it on a cluster"), run exactly as written: the `sh` blocks between
 * `<!-- walkthrough:begin -->` and `<!-- walkthrough:end -->` go into one script run by
 * `bash -euo pipefail` (and -x, for the failure message) in a fresh temp folder, against a
 * fresh kube-apiserver (envtest) and a fresh Postgres database, on free ports, with `writ` a shim
 * for `node bin/writ.mjs` and kubectl from the envtest folder on PATH. The test provides exactly
 * the variables the walkthrough's settings block exports (and fails when that list changes).
 *
 * It asserts what a reader is promised: the script succeeds; `writ verify` answers ALLOW, then
 * DENY (AGREEMENT_REVOKED) after the revoked manifest is applied; `writ log verify` verifies the
 * agreement's log entry offline against the pinned key; and Postgres agrees (one ledger entry,
 * the agreement revoked, the verified entry is the agreement's). Every process the script
 * started is stopped by its saved pid at the end, also on failure.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";
import { ensureEnvtest, startEnvtest, type Envtest } from "../helpers/envtest.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { extractWalkthrough } from "./walkthrough/extract.js";
import { recordedPids, startScript, stopRecordedProcesses, type ScriptResult } from "./walkthrough/script-process.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const BIN = join(REPO, "bin", "writ.mjs");
const WALKTHROUGH = join(REPO, "docs", "getting-started", "cluster.md");
/** Longest the whole walkthrough may run (each of its waits is bounded too). */
const SCRIPT_TIMEOUT_MS = 150_000;

/** The last `n` characters of a file in `dir`, or a note that it is missing. */
async function tail(dir: string, file: string, n = 6000): Promise<string> {
  try {
    return (await readFile(join(dir, file), "utf8")).slice(-n);
  } catch {
    return "(none)";
  }
}

describe("the cluster walkthrough (docs/getting-started/cluster.md)", () => {
  let env: Envtest;
  let db: TestDatabase;
  let work: string;

  beforeAll(async () => {
    const binDir = await ensureEnvtest();
    [env, db, work] = await Promise.all([startEnvtest({ binDir }), createTestDatabase({ migrate: false }), mkdtemp(join(tmpdir(), "writ-walkthrough-"))]);
  }, 30 * 60_000);

  afterAll(async () => {
    await db?.drop();
    await env?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  }, 120_000);

  it(
    "runs as written: ALLOW, DENY after the reviewed revocation, the log entry verifies offline",
    async () => {
      const walk = extractWalkthrough(await readFile(WALKTHROUGH, "utf8"));

      const shims = join(work, ".shims");
      const home = join(work, ".home");
      const cwd = join(work, "walk");
      await Promise.all([mkdir(shims), mkdir(home), mkdir(cwd)]);
      await writeFile(join(shims, "writ"), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
      await chmod(join(shims, "writ"), 0o755);
      const [servePort, controllerPort] = [await freePort(), await freePort()];
      const settings: Record<string, string> = {
        WRIT_CHECKOUT: REPO,
        KUBECONFIG: env.kubeconfigPath,
        DATABASE_URL: db.url,
        SERVE_PORT: String(servePort),
        CONTROLLER_PORT: String(controllerPort),
        WRIT_SERVER: `http://127.0.0.1:${servePort}`,
        BUR_ADMIN_TOKEN: randomBytes(24).toString("hex"),
        SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
      };
      expect(walk.settingNames, "the walkthrough's settings block and this test must name the same variables").toEqual(Object.keys(settings).sort());

      const scriptPath = join(work, "walkthrough.sh");
      await writeFile(scriptPath, walk.script);
      const script = startScript(scriptPath, {
        cwd,
        timeoutMs: SCRIPT_TIMEOUT_MS,
        env: {
          ...settings,
          PATH: [shims, env.binDir, process.env.PATH ?? "/usr/bin:/bin"].join(":"),
          HOME: home,
          TMPDIR: process.env.TMPDIR ?? tmpdir(),
          LANG: "C.UTF-8",
        },
      });
      let run: ScriptResult | undefined;
      let pids: Record<string, number> = {};
      try {
        run = await script.done;
      } finally {
        pids = recordedPids(cwd);
        await stopRecordedProcesses(cwd, script.pgid);
      }
      const report = async () =>
        [
          `exit ${run?.code} signal ${run?.signal}${run?.timedOut ? ` (killed after ${SCRIPT_TIMEOUT_MS} ms)` : ""}`,
          `--- stdout ---\n${run?.stdout.slice(-8000)}`,
          `--- stderr (bash -x) ---\n${run?.stderr.slice(-8000)}`,
          `--- serve.log ---\n${await tail(cwd, "serve.log")}`,
          `--- controller.log ---\n${await tail(cwd, "controller.log")}`,
        ].join("\n");
      expect(run?.code, await report()).toBe(0);
      const out = run?.stdout ?? "";
      process.stderr.write(`walkthrough: ${run?.ms} ms\n`);

      // The pids were saved, and nothing the script started outlives it.
      expect(Object.keys(pids).sort()).toEqual(["controller.pid", "serve.pid"]);

      // ALLOW, then DENY (revoked), then the offline log verification, in that order.
      const allow = out.search(/^ALLOW {2}\(svc_decision ALLOW\)$/m);
      const deny = out.search(/^DENY {2}\(svc_decision BLOCK\)\n.*\n {2}reasons: AGREEMENT_REVOKED$/m);
      const verified = /^verified: entry (\d+) is in the log whose head of \d+ entries \(.*\) is signed by sha256:[0-9a-f]{64} \(pinned\)$/m.exec(out);
      expect(allow, await report()).toBeGreaterThanOrEqual(0);
      expect(deny, await report()).toBeGreaterThan(allow);
      expect(verified?.index, await report()).toBeGreaterThan(deny);
      expect(out).not.toMatch(/^NOT verified/m);

      // Postgres, the system of record, agrees.
      const agreements = await db.pool.query<{ agreement_id: string; status: string }>("SELECT agreement_id, status FROM agreements");
      expect(agreements.rows).toEqual([{ agreement_id: expect.any(String), status: "revoked" }]);
      const ledger = await db.pool.query("SELECT 1 FROM ledger_entries");
      expect(ledger.rowCount).toBe(1);
      const entry = await db.pool.query<{ kind: string; body: string }>("SELECT kind, body FROM log_entries WHERE sequence = $1", [Number(verified?.[1])]);
      expect(entry.rows[0]?.kind).toBe("agreement");
      expect((JSON.parse(entry.rows[0]?.body ?? "{}") as { agreement_id?: string }).agreement_id).toBe(agreements.rows[0]?.agreement_id);
    },
    SCRIPT_TIMEOUT_MS + 60_000,
  );
});
