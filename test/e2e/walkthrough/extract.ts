/**
 * Reads the runnable walkthrough out of docs/getting-started/cluster.md ("Try it on a cluster"):
 *
 * - the settings block: the first fenced block after `<!-- walkthrough:settings -->`, the
 *   `export NAME=...` lines a reader runs once (the test provides those variables itself and
 *   never runs this block);
 * - the script: every fenced block whose info string starts with `sh`, in order, between
 *   `<!-- walkthrough:begin -->` and `<!-- walkthrough:end -->` (`text` blocks showing output
 *   are skipped).
 *
 * Throws when a marker is missing or repeated, so an edit of the page cannot silently empty the test.
 */

/** The walkthrough as the test runs it. */
export interface Walkthrough {
  /** The settings block's text. */
  readonly settings: string;
  /** Names the settings block exports, sorted. */
  readonly settingNames: readonly string[];
  /** The `sh` blocks of the walkthrough, in order. */
  readonly blocks: readonly string[];
  /** The blocks joined into one script. */
  readonly script: string;
}

const SETTINGS = "<!-- walkthrough:settings -->";
const BEGIN = "<!-- walkthrough:begin -->";
const END = "<!-- walkthrough:end -->";

/** A fenced code block: info string and body. */
interface Fence {
  readonly info: string;
  readonly body: string;
}

function fences(markdown: string): Fence[] {
  const out: Fence[] = [];
  const re = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm;
  for (let m = re.exec(markdown); m !== null; m = re.exec(markdown)) {
    out.push({ info: (m[1] ?? "").trim(), body: m[2] ?? "" });
  }
  return out;
}

function onlyIndex(markdown: string, marker: string): number {
  const first = markdown.indexOf(marker);
  if (first < 0) throw new Error(`the walkthrough has no ${marker}`);
  if (markdown.indexOf(marker, first + marker.length) >= 0) throw new Error(`the walkthrough has ${marker} more than once`);
  return first;
}

const isShell = (f: Fence) => (f.info.split(/\s+/)[0] ?? "") === "sh";

/** Names assigned on `export` lines, e.g. `export A=1 B=$A` -> [A, B]. */
export function exportedNames(settings: string): string[] {
  const names = new Set<string>();
  for (const line of settings.split("\n")) {
    const m = /^\s*export\s+(.*)$/.exec(line);
    if (!m) continue;
    for (const a of (m[1] ?? "").matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=/g)) names.add(a[1] as string);
  }
  return [...names].sort();
}

/** Extracts the settings and the script from the walkthrough page's text. */
export function extractWalkthrough(markdown: string): Walkthrough {
  const settingsAt = onlyIndex(markdown, SETTINGS);
  const begin = onlyIndex(markdown, BEGIN);
  const end = onlyIndex(markdown, END);
  if (!(settingsAt < begin && begin < end)) throw new Error(`the walkthrough: expected ${SETTINGS}, then ${BEGIN}, then ${END}`);
  const settingsFence = fences(markdown.slice(settingsAt + SETTINGS.length, begin))[0];
  if (!settingsFence || !isShell(settingsFence)) throw new Error(`the walkthrough: no sh block between ${SETTINGS} and ${BEGIN}`);
  const blocks = fences(markdown.slice(begin + BEGIN.length, end))
    .filter(isShell)
    .map((f) => f.body);
  if (blocks.length === 0) throw new Error(`the walkthrough: no sh block between ${BEGIN} and ${END}`);
  return {
    settings: settingsFence.body,
    settingNames: exportedNames(settingsFence.body),
    blocks,
    script: blocks.join("\n"),
  };
}
