/**
 * The service's own REVOKE decision on the verify path (docs/verify.md, "The service's REVOKE
 * decision"): revoke and record through the one revocation path (src/store/revocation/record.ts)
 * as policy acting for the principal, and store the verify answer, in ONE transaction.
 */
import type { Pool } from "pg";
import type { HashString } from "../../core/canonical/index.js";
import type { Signer } from "../../core/jose/index.js";
import {
  type LogAppendOptions,
  withTransaction,
  revokeAndRecord,
  type RecordedRevocation,
  saveVerifyDecision,
  type StoredVerifyDecision,
} from "../../store/index.js";
import type { VerifyCandidate } from "../caches/candidates.js";

/** The service's REVOKE decision to carry out. */
export interface PolicyRevoke {
  agentId: string;
  candidate: VerifyCandidate;
  reason: string;
  at: Date;
  signer: Signer | null;
  logOptions?: LogAppendOptions;
  /** The verify answer to store (last, in the same transaction). */
  decision: { actionId: string; requestHash: HashString; body: Record<string, unknown> };
}

/**
 * Carries out a REVOKE decision in ONE transaction: revokes the candidate's delegation as
 * policy acting for the principal (or, for an agreement without a delegation, the agreement
 * itself), logs, alerts, and stores the verify answer. A delegation with `revocable: false` is
 * not revoked (the spec conditions every revocation on it); the action is still refused.
 */
export async function revokeByPolicy(
  pool: Pool,
  p: PolicyRevoke,
): Promise<{ revocation: RecordedRevocation | null; saved: { stored: boolean; decision: StoredVerifyDecision } }> {
  return withTransaction(pool, async (client) => {
    const d = p.candidate.delegation?.delegation;
    const facts = { reason: p.reason, by: "policy" as const, at: p.at };
    const logging = { signer: p.signer, ...(p.logOptions ? { logOptions: p.logOptions } : {}) };
    let revocation: RecordedRevocation | null = null;
    if (d) {
      // Within the delegation's organization (an id names a record there only).
      const orgId = p.candidate.row.delegation?.orgId ?? p.candidate.orgId;
      if (d.revocable !== false) revocation = await revokeAndRecord(client, { kind: "delegation", orgId, id: d.delegation_id }, facts, logging);
    } else {
      revocation = await revokeAndRecord(client, { kind: "agreement", agentId: p.candidate.row.agentId, id: p.candidate.agreementId }, facts, logging);
    }
    // Stored last: the decision row is the only lock this shares with a concurrent spend of the same action.
    const saved = await saveVerifyDecision(client, {
      agentId: p.agentId,
      actionId: p.decision.actionId,
      agreementId: p.candidate.agreementId,
      requestHash: p.decision.requestHash,
      decision: p.decision.body,
    });
    return { revocation, saved };
  });
}
