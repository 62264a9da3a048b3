/**
 * The inquiry record (table `inquiries`, migrations/0030_registry.sql): every inquiry is kept
 * with who asked (organization and key), about which agent, for which purpose, and when.
 */
import { randomBytes } from "node:crypto";
import { formatId, ID_RANDOM_BYTES, type PurposeCode } from "../core/registry/index.js";
import type { Queryable } from "./pool.js";

/** An inquiry to record. */
export interface InquiryInput {
  org_id: string;
  key_id: string;
  agent_id: string;
  purpose_code: PurposeCode;
}

/** A recorded inquiry. */
export interface StoredInquiry {
  inquiry_id: string;
  /** RFC 3339, UTC. */
  created_at: string;
}

/** Records one inquiry made at `now`. */
export async function recordInquiry(q: Queryable, input: InquiryInput, now: Date): Promise<StoredInquiry> {
  const inquiryId = formatId("inquiry", randomBytes(ID_RANDOM_BYTES));
  const { rows } = await q.query<{ created_at: Date }>(
    `INSERT INTO inquiries (inquiry_id, org_id, key_id, agent_id, purpose_code, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING created_at`,
    [inquiryId, input.org_id, input.key_id, input.agent_id, input.purpose_code, now],
  );
  return { inquiry_id: inquiryId, created_at: (rows[0] as { created_at: Date }).created_at.toISOString() };
}
