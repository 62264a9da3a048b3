/**
 * The monitor's memory: the last verified signed tree head of one server, and the kid that
 * signed it, in a small JSON file `{writ_log_monitor: 1, server, kid, head, checked_at}`.
 * Written atomically (a temporary file renamed over the old one), so a crash never leaves half
 * a state. The stored head is itself signed, so a state file is also evidence.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { parseTreeHead, type TreeHead } from "../../core/tlog/index.js";
import { isHashString } from "../../core/canonical/index.js";
import { CliError } from "../errors.js";

/** What the monitor remembers. */
export interface MonitorState {
  writ_log_monitor: 1;
  server: string;
  kid: string;
  head: TreeHead;
  checked_at: string;
}

/** Reads the state file; undefined when it does not exist yet. Throws INPUT_INVALID when it is not a state. */
export function loadState(path: string, server: URL): MonitorState | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError("FILE_UNREADABLE", `cannot read --state ${path}: ${String((e as NodeJS.ErrnoException).code ?? e)}`);
  }
  const bad = (msg: string) => new CliError("INPUT_INVALID", `--state ${path} ${msg}; move it away to start over`);
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw bad("is not JSON");
  }
  if (doc?.writ_log_monitor !== 1 || typeof doc.server !== "string" || !isHashString(doc.kid)) throw bad("is not a writ log monitor state");
  if (doc.server !== server.href) throw bad(`belongs to ${doc.server}, not ${server.href}`);
  let head: TreeHead;
  try {
    head = parseTreeHead(doc.head);
  } catch {
    throw bad("holds no valid tree head");
  }
  return { writ_log_monitor: 1, server: doc.server, kid: doc.kid, head, checked_at: String(doc.checked_at) };
}

/** Writes the state atomically. */
export function saveState(path: string, state: MonitorState): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o644 });
    renameSync(tmp, path);
  } catch (e) {
    throw new CliError("FILE_UNREADABLE", `cannot write --state ${path}: ${String((e as NodeJS.ErrnoException).code ?? e)}`);
  }
}
