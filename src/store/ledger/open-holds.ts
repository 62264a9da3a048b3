/**
 * `ledger_open_holds` (migrations/0400_holds.sql): the allowed actions whose hold is still open,
 * for the expiry sweep (./holds.ts). The store keeps it in the statement that writes the entry,
 * in the same transaction (migrations/0510_citus_shard_safe_triggers.sql: no trigger, so a Citus
 * shard of ledger_entries has none that writes another table):
 *
 * - an allowed entry (not imported) opens a hold: sql/functions/writ_spend_write.sql, the one
 *   writer of allowed entries, in the same function call as the entry (no extra round trip);
 * - a settled, failed, voided or expired entry, or a capture marked final, closes it: a
 *   data-modifying CTE of the statement inserting the entry (`closeHoldByKeySql` for one entry,
 *   every value a parameter, so Citus routes it with the entry: ./outcome.ts, ./holds.ts;
 *   `closeHoldCte` for the rows of an import: ./rows.ts).
 */

/** Outcomes whose entry closes its action's open hold (a `captured` closes it only when final). */
export const CLOSING_OUTCOMES = ["settled", "failed", "voided", "expired"] as const;

/**
 * A CTE (`name AS (DELETE …)`) that closes the open hold of each row of `rows` (SQL yielding
 * columns agent_id, agreement_id, action_id, outcome, entry jsonb) whose outcome closes it.
 */
export function closeHoldCte(name: string, rows: string): string {
  return `${name} AS (
    DELETE FROM ledger_open_holds h USING (${rows}) n (agent_id, agreement_id, action_id, outcome, entry)
    WHERE h.agent_id = n.agent_id AND h.agreement_id = n.agreement_id AND h.action_id = n.action_id
      AND ${closesHoldSql("n.outcome", "n.entry")})`;
}

/**
 * The DELETE closing the open hold of one entry (SQL parameters: its agent, agreement, action,
 * outcome and entry jsonb) when its outcome closes it: a CTE body naming the agent, so the
 * statement stays on the agent's shard.
 */
export function closeHoldByKeySql(agent: string, agreement: string, action: string, outcome: string, entry: string): string {
  return `DELETE FROM ledger_open_holds WHERE agent_id = ${agent} AND agreement_id = ${agreement} AND action_id = ${action}
      AND ${closesHoldSql(outcome, entry)}`;
}

/** Whether an entry (SQL for its outcome and its entry jsonb) closes its action's open hold. */
function closesHoldSql(outcome: string, entry: string): string {
  return `(${outcome} IN (${CLOSING_OUTCOMES.map((o) => `'${o}'`).join(", ")}) OR (${outcome} = 'captured' AND ${entry} ? 'final'))`;
}
