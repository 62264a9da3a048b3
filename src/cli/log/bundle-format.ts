/**
 * The offline proof bundle of one log entry: everything `writ log verify --bundle` needs with
 * no network at all.
 *
 * `{writ_log_bundle: 1, server, fetched_at, sequence, entry, proof, tree_head, keys}`: the
 * entry (`GET /v1/log/entries/{n}`), its inclusion proof against exactly that head
 * (`GET /v1/log/entries/{n}/proof?tree_size=<head size>`), the signed head (`GET /v1/log/head`)
 * and the key list (`GET /.well-known/svc-keys.json`). The head is fetched first and the proof
 * is asked for at its size, so an append in between cannot mismatch them. `server` and
 * `fetched_at` are informative; nothing in them is trusted.
 */
import { CliError } from "../errors.js";
import { endpoint, errorText, requestJson } from "../http.js";
import type { CliIo } from "../io.js";

/** A proof bundle (the parts are unverified as read). */
export interface LogBundle {
  writ_log_bundle: 1;
  server?: string;
  fetched_at?: string;
  sequence: number;
  entry: unknown;
  proof: unknown;
  tree_head: unknown;
  keys: unknown;
}

const MEMBERS = new Set(["writ_log_bundle", "server", "fetched_at", "sequence", "entry", "proof", "tree_head", "keys"]);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks the outer shape of a bundle (the parts are verified by ./verify-bundle.ts). */
export function parseBundle(doc: unknown, source: string): LogBundle {
  const bad = (msg: string) => new CliError("CHECK_FAILED", `bundle ${source}: ${msg}`);
  if (!isObj(doc) || doc.writ_log_bundle !== 1) throw bad("not a log bundle (writ_log_bundle must be 1)");
  for (const k of Object.keys(doc)) if (!MEMBERS.has(k)) throw bad(`unexpected member ${JSON.stringify(k)}`);
  if (typeof doc.sequence !== "number" || !Number.isSafeInteger(doc.sequence) || doc.sequence < 1) throw bad("sequence must be a positive integer");
  for (const part of ["entry", "proof", "tree_head", "keys"]) if (!isObj(doc[part])) throw bad(`${part} is missing`);
  return doc as unknown as LogBundle;
}

async function getJson(io: CliIo, server: URL, path: string, what: string): Promise<unknown> {
  const answer = await requestJson(io, endpoint(server, path));
  if (answer.status === 200) return answer.body;
  throw new CliError("SERVER_ERROR", `GET ${path} (${what}) answered ${errorText(answer)}`);
}

/** Fetches the bundle of entry `sequence` from `server`. */
export async function fetchBundle(io: CliIo, server: URL, sequence: number): Promise<LogBundle> {
  const head = await getJson(io, server, "/v1/log/head", "the signed tree head");
  const size = isObj(head) ? head.tree_size : undefined;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 1) throw new CliError("CHECK_FAILED", "the server's tree head has no valid tree_size");
  if (sequence > size) throw new CliError("CHECK_FAILED", `entry ${sequence} is not in the log: the signed tree head has ${size} entries`);
  const entryAnswer = await getJson(io, server, `/v1/log/entries/${sequence}`, "the entry");
  const proof = await getJson(io, server, `/v1/log/entries/${sequence}/proof?tree_size=${size}`, "the inclusion proof");
  const keys = await getJson(io, server, "/.well-known/svc-keys.json", "the key list");
  return {
    writ_log_bundle: 1,
    server: server.href,
    fetched_at: io.now().toISOString(),
    sequence,
    entry: isObj(entryAnswer) ? entryAnswer.entry : undefined,
    proof,
    tree_head: head,
    keys,
  };
}
