/**
 * Which `writ dev` owns a `.writ` folder: `.writ/dev.pid` holds the process id of the one running
 * there. A file naming a process that is gone (a killed terminal) or that is not a Node process
 * (its id reused) claims nothing.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { processCommandLine } from "./processes.js";

const LOCK_FILE = "dev.pid";

/** The id of a live `writ dev` that claimed `root`, or null. */
export async function runningDevProcess(root: string): Promise<number | null> {
  const text = await readFile(join(root, LOCK_FILE), "utf8").catch(() => null);
  const pid = Number(text?.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return null;
  const cmdline = await processCommandLine(pid);
  return cmdline !== null && /node/.test(cmdline[0] ?? "") ? pid : null;
}

/** Claims `root` for this process; the returned function releases it. */
export async function claimDevFolder(root: string): Promise<() => Promise<void>> {
  const file = join(root, LOCK_FILE);
  await writeFile(file, `${process.pid}\n`);
  return () => rm(file, { force: true });
}
