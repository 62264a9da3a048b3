/**
 * The README's "2. The GitOps flow, in a folder", run as written against `writ dev`: the shell
 * blocks of that section, in order, in one `bash -euo pipefail`, in a fresh folder where
 * `writ dev` runs (so `.writ/tour` and `../samples` are where the README says), with `npx writ`
 * the checkout's `bin/writ.mjs` and only the port of WRIT_SERVER changed. Between the steps it
 * waits for the lines the README tells the reader to wait for (`Ready=True` of both resources,
 * then `Revoked`), bounded. It asserts what the README shows: the first verify ALLOW, the second
 * DENY `AGREEMENT_REVOKED` and exit 1. docs/getting-started/manifest-folder.md carries the same
 * blocks, word for word.
 */
import { execFile, spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/dev/free-port.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(REPO, "bin", "writ.mjs");
const README = readFileSync(join(REPO, "README.md"), "utf8");

/** The `sh` blocks of the README section headed `### 2. The GitOps flow, in a folder`. */
function tourBlocks(markdown: string): string[] {
  const start = markdown.indexOf("\n### 2. The GitOps flow, in a folder\n");
  const end = markdown.indexOf("\n### 3. ", start);
  if (start < 0 || end < 0) throw new Error("README.md has no section 2. The GitOps flow, in a folder");
  return [...markdown.slice(start, end).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

let work: string;
let dev: { stop(): Promise<number | null>; output(): string } | undefined;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "writ-readme-tour-"));
  await chmod(work, 0o755); // as root, Postgres runs as "postgres" and must enter the folder
});
afterAll(async () => {
  await dev?.stop();
  await rm(work, { recursive: true, force: true });
}, 60_000);

describe("the README's GitOps flow in a folder", () => {
  it("is in docs/getting-started/manifest-folder.md word for word", () => {
    const blocks = tourBlocks(README);
    expect(blocks).toHaveLength(2);
    const page = readFileSync(join(REPO, "docs", "getting-started", "manifest-folder.md"), "utf8");
    for (const b of blocks) expect(page).toContain("```sh\n" + b + "```");
  });

  it("runs as written: ALLOW, then after the revoked manifest is copied in, DENY AGREEMENT_REVOKED", async () => {
    const [first, second] = tourBlocks(README) as [string, string];
    const port = await freePort();
    const devOut = join(work, "dev.out");
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info" };
    const child = spawn(process.execPath, [BIN, "dev", "--port", String(port)], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const collect = (b: Buffer) => ((out += b.toString()), appendFileSync(devOut, b));
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    dev = { output: () => out, stop: async () => (child.kill("SIGTERM"), exited) };
    await expect.poll(() => out.includes(`serving http://127.0.0.1:${port}`), { timeout: 60_000, interval: 100 }).toBe(true);

    // `npx writ` as in the checkout; the README's WRIT_SERVER with this server's port.
    const shims = join(work, ".shims");
    await mkdir(shims);
    await writeFile(
      join(shims, "npx"),
      `#!/bin/sh\n[ "$1" = writ ] || { echo "unexpected: npx $*" >&2; exit 127; }\nshift\nexec '${process.execPath}' '${BIN}' "$@"\n`,
    );
    await chmod(join(shims, "npx"), 0o755);
    const lines = second.split("\n");
    const cut = lines.findIndex((l) => l.startsWith("cp revoked.yaml ../samples/agreement.yaml")) + 1;
    expect(cut, "the revocation step").toBeGreaterThan(0);
    const script = [
      `wait_for() { for _ in $(seq 600); do grep -qF "$1" "$DEV_OUT" && return 0; sleep 0.1; done; echo "writ dev never printed: $1" >&2; return 1; }`,
      first.replaceAll("http://127.0.0.1:8080", `http://127.0.0.1:${port}`),
      `wait_for "Delegation shop/books: Ready=True"`,
      `wait_for "IntentAgreement shop/agr-books-1: Ready=True"`,
      lines.slice(0, cut).join("\n"),
      `wait_for "IntentAgreement shop/agr-books-1: Revoked"`,
      lines.slice(cut).join("\n"),
    ].join("\n");
    expect(script).toContain(`WRIT_SERVER=http://127.0.0.1:${port}`);

    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        "bash",
        ["-euo", "pipefail", "-c", script],
        { cwd: work, env: { ...env, PATH: `${shims}:${env.PATH}`, DEV_OUT: devOut }, timeout: 150_000 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
    const why = `${result.stderr}\n--- writ dev ---\n${out.slice(-4000)}`;
    // The last command is the verify that is refused: exit 1, as the README says.
    expect(result.code, why).toBe(1);
    const verdicts = result.stdout.split("\n").filter((l) => /^(ALLOW|DENY|STEP_UP) /.test(l));
    expect(verdicts, why).toEqual(["ALLOW  (svc_decision ALLOW)", "DENY  (svc_decision BLOCK)"]);
    expect(result.stdout).toContain("  reasons: AGREEMENT_REVOKED\n");
    // ... which is what the README shows.
    for (const shown of ["`ALLOW  (svc_decision ALLOW)`", "`DENY  (svc_decision BLOCK)`", "`reasons: AGREEMENT_REVOKED` and exits 1"])
      expect(README).toContain(shown);
  }, 240_000);
});
