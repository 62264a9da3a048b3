/**
 * Announcements of revoked delegations and agreements on the NOTIFY channel `writ_revocations`
 * (the channel of src/store/notify.ts), and the parser of everything that channel carries.
 *
 * Payloads: `{"kind":"delegation"|"agreement","org":"<org id or ''>","ids":[...]}` from this
 * module (ids name records within the organization `org`, '' for records without one), and the
 * revocation feed's notice `{sequence, revocation_id, agreement_id, org_id, mandate_hash, at}`
 * (src/store/notify.ts), which announces one revoked agreement. A long id list is split over several NOTIFYs so each
 * payload stays under Postgres' 8000-byte limit. Like every NOTIFY, an announcement is delivered
 * only when the caller's transaction commits and is not durable: the tables are the record.
 */
import { parseRevocationNotice, REVOCATIONS_CHANNEL } from "../notify.js";
import type { Queryable } from "../pool.js";

/** What was revoked. */
export type RevokedKind = "delegation" | "agreement";

/** One announcement: ids of one kind that are now revoked. */
export interface RevocationAnnouncement {
  kind: RevokedKind;
  /** The organization the ids name records of ('' for records without one). */
  org: string;
  ids: string[];
}

/** Largest payload this module sends, in UTF-8 bytes (Postgres refuses 8000 and more). */
export const MAX_PAYLOAD_BYTES = 7900;
/** Longest id accepted in an announcement. */
export const MAX_ID_LENGTH = 256;

function isId(v: unknown): v is string {
  return typeof v === "string" && v.length >= 1 && v.length <= MAX_ID_LENGTH;
}

/** The payloads announcing `ids` (deduplicated, in order), each under MAX_PAYLOAD_BYTES. */
export function announcementPayloads(kind: RevokedKind, ids: readonly string[], org = ""): string[] {
  const out: string[] = [];
  let chunk: string[] = [];
  const overhead = Buffer.byteLength(JSON.stringify({ kind, org, ids: [] }));
  let size = overhead;
  for (const id of new Set(ids)) {
    if (!isId(id)) throw new TypeError(`a revoked ${kind} id must be 1 to ${MAX_ID_LENGTH} characters`);
    const cost = Buffer.byteLength(JSON.stringify(id)) + 1;
    if (chunk.length > 0 && size + cost > MAX_PAYLOAD_BYTES) {
      out.push(JSON.stringify({ kind, org, ids: chunk }));
      chunk = [];
      size = overhead;
    }
    chunk.push(id);
    size += cost;
  }
  if (chunk.length > 0) out.push(JSON.stringify({ kind, org, ids: chunk }));
  return out;
}

/** NOTIFYs that `ids` are revoked (delivered when the caller's transaction commits). */
export async function announceRevoked(db: Queryable, kind: RevokedKind, ids: readonly string[], org: string): Promise<void> {
  const payloads = announcementPayloads(kind, ids, org);
  if (payloads.length === 0) return;
  await db.query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", [REVOCATIONS_CHANNEL, payloads]);
}

/**
 * Parses any payload of the channel: an announcement of this module, or a revocation-feed
 * notice (read as the agreement it names). Undefined for anything else.
 */
export function parseRevocationPayload(payload: string | undefined): RevocationAnnouncement | undefined {
  if (payload === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (o.kind === "delegation" || o.kind === "agreement") {
    if (!Array.isArray(o.ids) || o.ids.length === 0 || !o.ids.every(isId)) return undefined;
    if (o.org !== undefined && typeof o.org !== "string") return undefined;
    return { kind: o.kind, org: o.org ?? "", ids: [...(o.ids as string[])] };
  }
  const notice = parseRevocationNotice(payload);
  if (notice && isId(notice.agreement_id)) return { kind: "agreement", org: notice.org_id ?? "", ids: [notice.agreement_id] };
  return undefined;
}
