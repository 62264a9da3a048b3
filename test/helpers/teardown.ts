/**
 * The teardown of an e2e file: stops what it started, in the order given (the processes first,
 * then the proxies, the database and the API server they use). Every step runs even when one
 * before it fails; the first failure is thrown at the end. What was never made (a `beforeAll`
 * that failed half-way) is `undefined` and skipped.
 */
import { rm } from "node:fs/promises";

/** Something an e2e file started: a child process, a proxy, a database, a tenant, a temp folder. */
export type Started =
  | { stop(signal?: NodeJS.Signals): Promise<unknown> }
  | { close(): Promise<unknown> }
  | { drop(): Promise<unknown> }
  | { cleanUp(): Promise<unknown> }
  | string
  | undefined;

function stopOne(s: Exclude<Started, undefined>): Promise<unknown> {
  if (typeof s === "string") return rm(s, { recursive: true, force: true });
  if ("stop" in s) return s.stop();
  if ("close" in s) return s.close();
  if ("drop" in s) return s.drop();
  return s.cleanUp();
}

/** Stops each of `started` in turn (see the module comment). */
export async function stopAll(...started: Started[]): Promise<void> {
  const failures: unknown[] = [];
  for (const s of started) {
    if (s === undefined) continue;
    await stopOne(s).catch((err: unknown) => failures.push(err));
  }
  if (failures.length > 0) throw failures[0];
}
