/**
 * Revocation announcements over Postgres LISTEN/NOTIFY on the channel `writ_revocations`.
 *
 * Payload (JSON, well under NOTIFY's 8000-byte limit): `{sequence, revocation_id,
 * agreement_id, org_id, mandate_hash, at}` (`org_id`: the agreement's organization, '' for
 * none; absent from notices of older processes). NOTIFY is delivered only to sessions listening at commit
 * time and is not stored: the listener (`RevocationChannel`, src/store/revocation/channel.ts)
 * emits `connected` after every (re)connection, and a consumer must then catch up from the
 * durable tables. Notices may therefore arrive twice; `sequence` orders and deduplicates them.
 */
import { isHashString, type HashString } from "../core/canonical/index.js";
import type { Queryable } from "./pool.js";

/** The NOTIFY channel of the revocation feed. */
export const REVOCATIONS_CHANNEL = "writ_revocations";

/** What a revocation announcement carries. */
export interface RevocationNotice {
  sequence: number;
  revocation_id: HashString;
  agreement_id: string;
  /** The organization of the revoked agreement ('' for none). */
  org_id?: string;
  mandate_hash: string;
  at: string;
}

/** Sends `NOTIFY writ_revocations, '<json>'` (delivered when the caller's transaction commits). */
export async function notifyRevocation(db: Queryable, notice: RevocationNotice): Promise<void> {
  await db.query("SELECT pg_notify($1, $2)", [REVOCATIONS_CHANNEL, JSON.stringify(notice)]);
}

/** Parses a NOTIFY payload; undefined when it is not a well-formed notice. */
export function parseRevocationNotice(payload: string | undefined): RevocationNotice | undefined {
  if (payload === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const n = v as Record<string, unknown>;
  if (!Number.isSafeInteger(n.sequence) || (n.sequence as number) < 1) return undefined;
  if (!isHashString(n.revocation_id)) return undefined;
  if (typeof n.agreement_id !== "string" || typeof n.mandate_hash !== "string" || typeof n.at !== "string") return undefined;
  return {
    sequence: n.sequence as number,
    revocation_id: n.revocation_id,
    agreement_id: n.agreement_id,
    ...(typeof n.org_id === "string" ? { org_id: n.org_id } : {}),
    mandate_hash: n.mandate_hash,
    at: n.at,
  };
}
