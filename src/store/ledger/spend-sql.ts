/**
 * The statements of the spend transaction (./spend.ts), for a batch of spends. Both are sent
 * with the simple query protocol, their one input an escaped `jsonb` literal (a JSON array, one
 * object per spend or per row to write), so that each shares its round trip with the
 * statements around it (BEGIN and the locks before the read; COMMIT after the write).
 *
 * SPEND_READ_SQL(spends) runs after every lock of the batch is held, so its snapshot sees every
 * spend and release committed before. One row per spend (`i`, in the batch's order), with what
 * the budget re-check needs, all as of that snapshot:
 * - the agreement row (`found` false: none), its head, status, revocation and delegation; the
 *   currency of the spend's intent among its mandates (null: no such intent);
 * - `delegation_revoked` (the agreement's delegation), `pushed_revocation` (a stored pushed
 *   principal revocation of the agreement);
 * - the totals: the intent's (`intent_spent`), the agreement's in the spend's currency
 *   (`total_spent`, when `parent`), the delegation's in its currency `dcur` and whether it
 *   holds spend in any other currency (`delegation_spent`, `delegation_mixed`, when `dcur`);
 * - idempotency: the action's `allowed` entry (`existing`), whether a `failed` entry released
 *   it (`released`), and whether an answer is stored for (`agent_id`, action) (`decided`).
 * Totals come back as decimal text (bigint minor units).
 *
 * SPEND_WRITE_SQL(entries, heads, totals, decisions) writes a batch's decided spends in ONE
 * statement: the entries, each agreement's new head, the additions to the intents' totals
 * (one per intent: the sum of the batch's spends on it), and the verify answers (unless one is
 * already stored for the action). It returns the (agent_id, action_id) of the answers stored.
 */

/** The per-spend read (see the module comment); `spends` is their `jsonb` literal. */
export function spendReadSql(spends: string): string {
  return `
SELECT s.i, a.agreement_id IS NOT NULL AS found, a.ledger_sequence, a.ledger_head, a.status,
  a.revoked_at IS NOT NULL AS revoked, a.delegation_id,
  (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) AS intent_currency,
  coalesce((SELECT d.revoked_at IS NOT NULL FROM delegations d WHERE d.delegation_id = a.delegation_id), false) AS delegation_revoked,
  EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = s.agreement_id) AS pushed_revocation,
  coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text AS intent_spent,
  CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
    ELSE 0 END::text AS total_spent,
  CASE WHEN s.dcur IS NULL THEN 0
    ELSE coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                   WHERE b.delegation_id = a.delegation_id AND t.currency = s.dcur), 0) END::text AS delegation_spent,
  CASE WHEN s.dcur IS NULL THEN false
    ELSE EXISTS (SELECT 1 FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                 WHERE b.delegation_id = a.delegation_id AND t.currency <> s.dcur AND t.spent_minor > 0) END AS delegation_mixed,
  (SELECT e.entry FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id AND e.outcome = 'allowed') AS existing,
  EXISTS (SELECT 1 FROM ledger_entries f WHERE f.agreement_id = s.agreement_id AND f.action_id = s.action_id AND f.outcome = 'failed') AS released,
  (s.agent_id IS NOT NULL AND EXISTS (SELECT 1 FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id)) AS decided
FROM jsonb_to_recordset(${spends}::jsonb) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text)
LEFT JOIN agreements a ON a.agreement_id = s.agreement_id
ORDER BY s.i`;
}

/** The batch's writes (see the module comment); each argument is a `jsonb` literal. */
export function spendWriteSql(entries: string, heads: string, totals: string, decisions: string): string {
  return `
WITH ins AS (
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
  SELECT e.agreement_id, e.sequence, e.entry, e.action_id, 'allowed', e.intent_id, e.currency, e.amount_minor, e.entry_hash, e.prev_entry_hash
  FROM jsonb_to_recordset(${entries}::jsonb) AS e(agreement_id text, sequence int, entry jsonb, action_id text, intent_id text, currency text,
                                                  amount_minor bigint, entry_hash text, prev_entry_hash text)
),
head AS (
  UPDATE agreements a SET ledger_sequence = h.sequence, ledger_head = h.head, updated_at = now()
  FROM jsonb_to_recordset(${heads}::jsonb) AS h(agreement_id text, sequence int, head text)
  WHERE a.agreement_id = h.agreement_id
),
spend AS (
  INSERT INTO agreement_spend (agreement_id, intent_id, currency, spent_minor)
  SELECT t.agreement_id, t.intent_id, t.currency, t.add FROM jsonb_to_recordset(${totals}::jsonb) AS t(agreement_id text, intent_id text, currency text, add bigint)
  ON CONFLICT (agreement_id, intent_id) DO UPDATE SET spent_minor = agreement_spend.spent_minor + EXCLUDED.spent_minor
),
decision AS (
  INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision)
  SELECT d.agent_id, d.action_id, d.agreement_id, d.request_hash, d.decision
  FROM jsonb_to_recordset(${decisions}::jsonb) AS d(agent_id text, action_id text, agreement_id text, request_hash text, decision jsonb)
  ON CONFLICT (agent_id, action_id) DO NOTHING
  RETURNING agent_id, action_id
)
SELECT agent_id, action_id FROM decision`;
}
