/**
 * One monitor check: fetch the latest signed tree head, verify its signature (key chosen as in
 * ./trust.ts, and the same kid as the last verified head unless a pin says which key), and
 * compare it with the last verified head:
 *
 * - same size: the roots must be equal, else the log shows two different trees of one size
 *   (a split view: both heads are signed, so together they prove the misbehaviour);
 * - larger: the server's consistency proof between the two sizes must verify against both
 *   roots (RFC 9162 §2.1.4.2), else the new head rewrites history;
 * - smaller: a log never shrinks; a smaller head is a rollback.
 *
 * A failed check throws CliError CHECK_FAILED whose message names what failed and carries the
 * heads involved; network and server errors throw NETWORK / SERVER_ERROR.
 */
import { hashBytes, isHashString, type HashString } from "../../core/canonical/index.js";
import { treeHeadRoot, verifyConsistency, verifyTreeHead, type TreeHead } from "../../core/tlog/index.js";
import { CliError } from "../errors.js";
import { endpoint, errorText, requestJson } from "../http.js";
import type { CliIo } from "../io.js";
import { chooseKey, type KeyPin } from "./trust.js";

/** What a successful check found. */
export type HeadOutcome = { kind: "first" | "unchanged" } | { kind: "grown"; from: number };

/** A verified head and how it relates to the last one. */
export interface HeadCheck {
  head: TreeHead;
  kid: string;
  outcome: HeadOutcome;
}

/** The last verified head (from the state). */
export interface LastHead {
  head: TreeHead;
  kid: string;
}

function evidence(a: TreeHead, b: TreeHead): string {
  return `\nevidence (both heads are signed by the log key):\n  last verified: ${JSON.stringify(a)}\n  new:           ${JSON.stringify(b)}`;
}

function failed(message: string): CliError {
  return new CliError("CHECK_FAILED", message);
}

async function fetchJson(io: CliIo, server: URL, path: string): Promise<unknown> {
  const answer = await requestJson(io, endpoint(server, path));
  if (answer.status !== 200) throw new CliError("SERVER_ERROR", `GET ${path} answered ${errorText(answer)}`);
  return answer.body;
}

async function consistencyProof(io: CliIo, server: URL, first: number, second: number): Promise<Buffer[]> {
  const body = (await fetchJson(io, server, `/v1/log/consistency?first=${first}&second=${second}`)) as Record<string, unknown> | null;
  if (body?.first !== first || body.second !== second || !Array.isArray(body.proof) || !body.proof.every(isHashString)) {
    throw failed(`the server's consistency proof between ${first} and ${second} is malformed`);
  }
  return body.proof.map((h) => hashBytes(h as HashString));
}

/** Runs one check against `server`. */
export async function checkHead(io: CliIo, server: URL, pin: KeyPin, last: LastHead | undefined): Promise<HeadCheck> {
  const raw = (await fetchJson(io, server, "/v1/log/head")) as Record<string, unknown> | null;
  const keys = pin.kind === "key" ? undefined : await fetchJson(io, server, "/.well-known/svc-keys.json");
  const key = chooseKey(raw?.signature, keys, pin, "the server's key list");
  if (last !== undefined && pin.kind === "none" && key.kid !== last.kid) {
    throw failed(
      `the log key changed from ${last.kid} to ${key.kid}; if this rotation is expected, pin the new key with --kid ${key.kid} or start a new state file`,
    );
  }
  let head: TreeHead;
  try {
    head = await verifyTreeHead(raw, key.key);
  } catch (e) {
    throw failed(`the tree head's signature does not verify with ${key.kid}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (last === undefined) return { head, kid: key.kid, outcome: { kind: "first" } };
  const prev = last.head;
  if (head.tree_size === prev.tree_size) {
    if (head.root !== prev.root) {
      throw failed(
        `split view: two signed heads of size ${head.tree_size} with different roots, ${prev.root} (at ${prev.at}) and ${head.root} (at ${head.at})${evidence(prev, head)}`,
      );
    }
    return { head, kid: key.kid, outcome: { kind: "unchanged" } };
  }
  if (head.tree_size < prev.tree_size) {
    throw failed(
      `rollback: the signed head has ${head.tree_size} entries, fewer than the ${prev.tree_size} already verified; a log never shrinks${evidence(prev, head)}`,
    );
  }
  const proof = await consistencyProof(io, server, prev.tree_size, head.tree_size);
  try {
    verifyConsistency(prev.tree_size, head.tree_size, proof, treeHeadRoot(prev), treeHeadRoot(head));
  } catch (e) {
    throw failed(
      `inconsistent: the head of size ${head.tree_size} (root ${head.root}) does not extend the verified head of size ${prev.tree_size} (root ${prev.root}): ${e instanceof Error ? e.message : String(e)}${evidence(prev, head)}`,
    );
  }
  return { head, kid: key.kid, outcome: { kind: "grown", from: prev.tree_size } };
}
