/** Reads of one agreement's ledger that are not part of a write. */
import type { LedgerEntry } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import type { Queryable } from "../pool.js";

/** Where an allowed action stands in its agreement's ledger. */
export interface AllowedAction {
  /** Sequence and hash of the action's `allowed` entry. */
  sequence: number;
  entry_hash: HashString;
  /** True when a later entry released its amount (failed, or a hold step that gave budget back: voided, expired, released) (it no longer counts against any budget). */
  released: boolean;
}

/** The `allowed` entry of `actionId` in agent `agentId`'s agreement `agreementId`'s ledger and whether it was released since, or undefined. */
export async function allowedActionOf(q: Queryable, agentId: string, agreementId: string, actionId: string): Promise<AllowedAction | undefined> {
  const { rows } = await q.query<AllowedAction>(
    `SELECT e.sequence, e.entry_hash,
            EXISTS (SELECT 1 FROM ledger_entries f WHERE f.agent_id = e.agent_id AND f.agreement_id = e.agreement_id AND f.action_id = e.action_id AND f.outcome IN ('failed', 'voided', 'expired', 'released')) AS released
     FROM ledger_entries e WHERE e.agent_id = $3 AND e.agreement_id = $1 AND e.action_id = $2 AND e.outcome = 'allowed'`,
    [agreementId, actionId, agentId],
  );
  return rows[0];
}

/** A page of agent `agentId`'s agreement `agreementId`'s ledger: the entries after sequence `after`, at most `limit`, in order. */
export async function ledgerPage(q: Queryable, agentId: string, agreementId: string, after: number, limit: number): Promise<LedgerEntry[]> {
  const { rows } = await q.query<{ entry: LedgerEntry }>(
    "SELECT entry FROM ledger_entries WHERE agent_id = $1 AND agreement_id = $2 AND sequence > $3 ORDER BY sequence LIMIT $4",
    [agentId, agreementId, after, limit],
  );
  return rows.map((r) => r.entry);
}
