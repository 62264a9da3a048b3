/**
 * Inquiry purpose codes: every inquiry states why it is made (a permissible purpose); the list
 * is closed.
 */

/** The purpose codes an inquiry may state. */
export const PURPOSE_CODES = ["payment_authorization", "account_opening", "dispute_review", "fraud_investigation", "compliance_check"] as const;

/** A purpose code. */
export type PurposeCode = (typeof PURPOSE_CODES)[number];

/** True when `v` is one of PURPOSE_CODES. */
export function isPurposeCode(v: unknown): v is PurposeCode {
  return typeof v === "string" && (PURPOSE_CODES as readonly string[]).includes(v);
}

/** How many recent evidence hashes a contributor receives. */
export const RECENT_EVIDENCE_LIMIT = 10;
