/**
 * The transparency log entry of the spec: `{kind, sequence, body, entry_hash,
 * prev_entry_hash}`. `sequence` starts at 1; `prev_entry_hash` is present on every entry after
 * the first and names the previous entry's `entry_hash`; `entry_hash` is the SHA-256 of the
 * canonical (RFC 8785) entry without `entry_hash`. The Merkle leaf of an entry is the RFC 6962
 * leaf hash of the canonical bytes of the whole entry (with `entry_hash`), and leaf index =
 * sequence - 1.
 */
import { canonicalBytes, canonicalJson, describeLoneSurrogate, findLoneSurrogate, hashWithout, isHashString, type HashString } from "../canonical/index.js";
import { leafHash } from "./hash.js";

/** Kinds of log entries. */
export type LogKind = "agreement" | "revocation" | "registration" | "incident";

/** Every {@link LogKind}, in the spec's order. */
export const LOG_KINDS: readonly LogKind[] = Object.freeze(["agreement", "revocation", "registration", "incident"]);

/** One entry of the transparency log. */
export interface LogEntry {
  kind: LogKind;
  sequence: number;
  body: Record<string, unknown>;
  entry_hash: HashString;
  prev_entry_hash?: HashString;
}

/** Stable code of {@link LogEntryError}. */
export type LogEntryErrorCode = "LOG_ENTRY_INVALID";

/** An entry that cannot be built from the given kind, sequence, body and previous hash. */
export class LogEntryError extends Error {
  override readonly name = "LogEntryError";
  readonly code: LogEntryErrorCode = "LOG_ENTRY_INVALID";
}

const ENTRY_MEMBERS = new Set(["kind", "sequence", "body", "entry_hash", "prev_entry_hash"]);

/** True when `k` is one of {@link LOG_KINDS}. */
export function isLogKind(k: unknown): k is LogKind {
  return typeof k === "string" && (LOG_KINDS as readonly string[]).includes(k);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Why `kind`, `sequence`, `body` and `prev` cannot form an entry, or undefined. */
function headProblem(kind: unknown, sequence: unknown, body: unknown, prev: unknown): string | undefined {
  if (!isLogKind(kind)) return `kind must be one of ${LOG_KINDS.join(", ")}`;
  if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 1) {
    return "sequence must be a safe integer of at least 1";
  }
  if (!isPlainObject(body)) return "body must be a JSON object";
  if (sequence === 1 && prev !== undefined) return "the first entry has no prev_entry_hash";
  if (sequence > 1 && !isHashString(prev)) return "prev_entry_hash must be a sha256: hash on every entry after the first";
  return undefined;
}

/**
 * Builds entry `sequence` of the log with its `entry_hash`. The body is normalised to its
 * canonical JSON value (what is hashed is what is stored); it must be I-JSON (RFC 8785 input):
 * a lone surrogate in its text has no UTF-8 form, so no independent verifier could reproduce
 * the hash. `prevEntryHash` is required for every sequence after 1 and refused for sequence 1.
 * Throws LogEntryError.
 */
export function buildLogEntry(kind: LogKind, sequence: number, body: Record<string, unknown>, prevEntryHash?: HashString): LogEntry {
  const problem = headProblem(kind, sequence, body, prevEntryHash);
  if (problem) throw new LogEntryError(problem);
  const lone = findLoneSurrogate(body);
  if (lone) throw new LogEntryError(describeLoneSurrogate({ ...lone, path: ["body", ...lone.path] }, "body"));
  let normal: Record<string, unknown>;
  try {
    normal = JSON.parse(canonicalJson(body)) as Record<string, unknown>;
  } catch {
    throw new LogEntryError("body has no canonical JSON form");
  }
  const prev = prevEntryHash !== undefined ? { prev_entry_hash: prevEntryHash } : {};
  const entryHash = hashWithout({ kind, sequence, body: normal, ...prev, entry_hash: "" }, "entry_hash");
  return { kind, sequence, body: normal, entry_hash: entryHash, ...prev };
}

/** RFC 6962 leaf hash of the canonical bytes of the whole entry: the entry's Merkle leaf. */
export function logLeafHash(entry: LogEntry): Buffer {
  return leafHash(canonicalBytes(entry));
}

/**
 * Checks an untrusted value as a log entry: exact members, kind, sequence, body object, the
 * `prev_entry_hash` rule and that `entry_hash` matches the content. Returns what is wrong, or
 * undefined when the entry is sound. (Linking to the previous entry: {@link verifyLogLink}.)
 */
export function verifyLogEntry(entry: unknown): string | undefined {
  if (!isPlainObject(entry)) return "log entry must be a JSON object";
  for (const k of Object.keys(entry)) {
    if (!ENTRY_MEMBERS.has(k)) return `log entry has an unexpected member ${JSON.stringify(k)}`;
  }
  const problem = headProblem(entry.kind, entry.sequence, entry.body, entry.prev_entry_hash);
  if (problem) return problem;
  if (!isHashString(entry.entry_hash)) return "entry_hash must be a sha256: hash";
  let want: HashString;
  try {
    want = hashWithout(entry, "entry_hash");
  } catch {
    return "log entry has no canonical JSON form";
  }
  return want === entry.entry_hash ? undefined : "entry_hash does not match the entry";
}

/**
 * Checks that `entry` directly follows `prev` (or is the first entry when `prev` is
 * undefined): consecutive sequences and `prev_entry_hash` equal to the previous `entry_hash`.
 * Returns what is wrong, or undefined.
 */
export function verifyLogLink(prev: LogEntry | undefined, entry: LogEntry): string | undefined {
  if (prev === undefined) {
    return entry.sequence === 1 && entry.prev_entry_hash === undefined ? undefined : "the first entry must have sequence 1 and no prev_entry_hash";
  }
  if (entry.sequence !== prev.sequence + 1) return "sequence does not follow the previous entry";
  if (entry.prev_entry_hash !== prev.entry_hash) return "prev_entry_hash does not name the previous entry";
  return undefined;
}
