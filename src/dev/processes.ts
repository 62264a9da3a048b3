/** Looks at other processes of this machine (Linux `/proc`), for the dev loop's stale-process checks. */
import { readFile } from "node:fs/promises";

/** The arguments process `pid` was started with, or null when it is gone (or cannot be read). */
export async function processCommandLine(pid: number): Promise<string[] | null> {
  const raw = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => null);
  if (raw === null || raw === "") return null;
  return raw.replace(/\0$/, "").split("\0");
}

/** Waits until process `pid` is gone, checking every `everyMs` for at most `timeoutMs`; true when gone. */
export async function processGone(pid: number, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if ((await processCommandLine(pid)) === null) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
