/**
 * Shell scripts that run under `set -o pipefail` (.ci/run, hack/**.sh, the shell blocks of the
 * README and docs/, among them the cluster walkthrough the e2e test runs)
 * never pipe into a reader that may exit before the writer is done (`head`, `grep -q`,
 * `grep -m`): the writer then dies of SIGPIPE (exit 141) and fails the pipeline, at random.
 * That is how a fresh machine's first `npm test` failed in hack/envtest/provision.sh.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const EARLY_EXIT_READER = /\|\s*(head\b|grep\s+(-[a-zA-Z]*[qm]|--quiet|--max-count)|sed\s+(-n\s+)?['"]?\d*q)/;

function filesEndingIn(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...(name.startsWith(".") ? [] : filesEndingIn(path, suffix)));
    else if (name.endsWith(suffix)) out.push(path);
  }
  return out;
}
const shellFiles = (dir: string) => filesEndingIn(dir, ".sh");

/** The lines of a script (comments dropped) that pipe into an early-exiting reader. */
export function earlyExitPipes(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.replace(/(^|\s)#.*$/, ""))
    .filter((line) => EARLY_EXIT_READER.test(line));
}

describe("pipelines under pipefail", () => {
  it("the rule finds the pipeline that failed provisioning, and passes its fix", () => {
    expect(earlyExitPipes('found=$("$BIN_DIR/etcd" --version | head -n1)')).toHaveLength(1);
    expect(earlyExitPipes("dpkg-query -W x | grep -q 'ok installed'")).toHaveLength(1);
    expect(earlyExitPipes('found=$(first_line "$BIN_DIR/etcd" --version)')).toEqual([]);
  });

  it("the pattern really fails under pipefail (a writer still writing when head exits)", () => {
    const run = (script: string) => {
      try {
        execFileSync("bash", ["-c", script], { stdio: "pipe" });
        return 0;
      } catch (e) {
        return (e as { status: number }).status;
      }
    };
    expect(run("set -o pipefail; yes | head -n1 >/dev/null")).toBe(141);
    expect(run('set -o pipefail; out=$(yes | dd bs=1k count=64 2>/dev/null); printf "%s\\n" "${out%%$\'\\n\'*}" >/dev/null')).toBe(0);
  });

  it("no script in the repository pipes into head or grep -q", () => {
    const files = [join(REPO, ".ci/run"), ...shellFiles(join(REPO, "hack"))];
    const found = files.flatMap((f) => earlyExitPipes(readFileSync(f, "utf8")).map((l) => `${relative(REPO, f)}: ${l.trim()}`));
    for (const doc of [join(REPO, "README.md"), join(REPO, "CONTRIBUTING.md"), ...filesEndingIn(join(REPO, "docs"), ".md")]) {
      const blocks = [...readFileSync(doc, "utf8").matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
      found.push(...blocks.flatMap((b) => earlyExitPipes(b).map((l) => `${relative(REPO, doc)}: ${l.trim()}`)));
    }
    expect(found).toEqual([]);
  });
});
