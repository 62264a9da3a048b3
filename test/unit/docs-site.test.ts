/**
 * The docs site (docs/.vitepress/config.ts) builds, in `npm test`, into a temp folder: VitePress
 * fails the build on a link to a page that does not exist. VitePress does not check headings, so
 * this test checks every relative link of docs/, README.md and CONTRIBUTING.md itself: its file
 * exists, and the heading it names (`#…`) is one of that file's, by GitHub's anchors (which the
 * site uses too).
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { githubSlug } from "../../docs/.vitepress/config.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const DOCS = join(REPO, "docs");

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name.startsWith(".") || e.name === "node_modules" ? [] : markdownFiles(path);
    return e.name.endsWith(".md") ? [path] : [];
  });
}

/** The text of `markdown` outside fenced code blocks. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```[ \t]*$/gm, "");
}

/** GitHub's anchors of a file's headings (a repeated one gets -1, -2, …). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const text = (m[1] ?? "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*]/g, "");
    const slug = githubSlug(text);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Relative links (and images) of `markdown`: `[text](target)`, external and mail links left out. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g), ...text.matchAll(/<img[^>]*\ssrc="([^"]+)"/g)]
    .map((m) => m[1] as string)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe("the docs", () => {
  const files = [join(REPO, "README.md"), join(REPO, "CONTRIBUTING.md"), ...markdownFiles(DOCS)];

  it("every relative link names a file that exists, and a heading it has", () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const link of linksOf(readFileSync(file, "utf8"))) {
        const [path = "", anchor] = link.split("#", 2);
        const target = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
        const where = `${relative(REPO, file)}: ${link}`;
        if (!existsSync(target)) {
          broken.push(`${where} (no such file)`);
        } else if (anchor !== undefined && target.endsWith(".md") && !anchorsOf(readFileSync(target, "utf8")).has(anchor)) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("README.md stays short, with a table of contents", () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15 * 1024);
    expect(readme.startsWith("# Writ\n\n```sh\nnpm ci && npm start ")).toBe(true);
    expect(readme).toMatch(/\nnpm ci && npm test {5}#/);
    expect(readme).toContain("\n## Contents\n");
  });

  const out: string[] = [];
  afterAll(async () => {
    await Promise.all(out.map((d) => rm(d, { recursive: true, force: true })));
  });

  it("the site builds with VitePress, dead links failing the build", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-docs-site-"));
    out.push(dir);
    const vitepress = join(REPO, "node_modules", "vitepress", "bin", "vitepress.js");
    const run = promisify(execFile)(process.execPath, [vitepress, "build", "docs", "--outDir", join(dir, "site")], {
      cwd: REPO,
      env: { ...process.env, WRIT_DOCS_CACHE_DIR: join(dir, "cache"), NODE_ENV: "production" },
      timeout: 170_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const { stdout } = await run.catch((e: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`vitepress build failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
    });
    expect(stdout).toContain("build complete");
    for (const page of [
      "index.html",
      "getting-started/index.html",
      "getting-started/cluster.html",
      "reference/settings.html",
      "operations/troubleshooting.html",
      "reasons.html",
    ]) {
      expect(existsSync(join(dir, "site", page)), page).toBe(true);
    }
  }, 180_000);
});
