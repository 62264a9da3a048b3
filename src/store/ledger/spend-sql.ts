/**
 * The one statement of the spend transaction (./spend.ts), run while the agreement
 * row is locked. Its snapshot is taken after the lock, so it sees every spend committed before.
 *
 * It decides, in this order: `released` (the action was allowed and its spend released since
 * by a `failed` outcome: never replayed, never spent again), `replay` (the action is already
 * recorded as allowed), `decided` (another answer is already stored for the action, e.g. a
 * retry of an action that was refused: nothing is spent, the caller answers the stored one), the refusal
 * the caller found on the locked row ($10), DELEGATION_REVOKED, AGREEMENT_REVOKED (a pushed
 * principal revocation), CUMULATIVE_BUDGET_EXCEEDED (slice, then parent), DELEGATION_BUDGET_EXCEEDED,
 * else `ok`; only on `ok` do the writes happen (each write reads the `ins` CTE, so they are all
 * or nothing): the entry, the head, the intent total, and the verify decision (unless one is
 * already stored for the action; `decision_stored` tells).
 *
 * Parameters: $1 agreement_id, $2 intent_id, $3 currency, $4 action_id, $5 amount_minor,
 * $6 sequence, $7 entry (jsonb text), $8 entry_hash, $9 prev_entry_hash, $10 refusal or null,
 * $11 slice, $12 parent cumulative, $13 the agreement's delegation_id, $14 delegation
 * cumulative, $15 delegation currency, $16 amount in the delegation currency, $17 decision
 * agent_id, $18 request hash, $19 decision body (jsonb text). Limits are null when absent.
 */
export const SPEND_SQL = `
WITH existing AS (
  SELECT e.entry, EXISTS (SELECT 1 FROM ledger_entries f WHERE f.agreement_id = $1 AND f.action_id = $4 AND f.outcome = 'failed') AS released
  FROM ledger_entries e WHERE e.agreement_id = $1 AND e.action_id = $4 AND e.outcome = 'allowed'
),
totals AS (
  SELECT
    coalesce((SELECT spent_minor FROM agreement_spend WHERE agreement_id = $1 AND intent_id = $2), 0) AS intent_spent,
    CASE WHEN $12::bigint IS NULL THEN 0
      ELSE coalesce((SELECT sum(spent_minor) FROM agreement_spend WHERE agreement_id = $1 AND currency = $3), 0) END AS total_spent,
    CASE WHEN $14::bigint IS NULL THEN 0
      ELSE coalesce((SELECT sum(s.spent_minor) FROM agreement_spend s JOIN agreements a ON a.agreement_id = s.agreement_id
                     WHERE a.delegation_id = $13::text AND s.currency = $15::text), 0) END AS delegation_spent,
    CASE WHEN $14::bigint IS NULL THEN false
      ELSE EXISTS (SELECT 1 FROM agreement_spend s JOIN agreements a ON a.agreement_id = s.agreement_id
                   WHERE a.delegation_id = $13::text AND s.currency <> $15::text AND s.spent_minor > 0) END AS delegation_mixed,
    coalesce((SELECT revoked_at IS NOT NULL FROM delegations WHERE delegation_id = $13::text), false) AS delegation_revoked,
    EXISTS (SELECT 1 FROM revocations WHERE agreement_id = $1) AS pushed_revocation
),
verdict AS (
  SELECT t.*, CASE
    WHEN EXISTS (SELECT 1 FROM existing WHERE released) THEN 'released'
    WHEN EXISTS (SELECT 1 FROM existing) THEN 'replay'
    WHEN $17::text IS NOT NULL AND EXISTS (SELECT 1 FROM verify_decisions WHERE agent_id = $17::text AND action_id = $4::text) THEN 'decided'
    WHEN $10::text IS NOT NULL THEN $10::text
    WHEN t.delegation_revoked THEN 'DELEGATION_REVOKED'
    WHEN t.pushed_revocation THEN 'AGREEMENT_REVOKED'
    WHEN $11::bigint IS NOT NULL AND t.intent_spent + $5::bigint > $11::bigint THEN 'CUMULATIVE_BUDGET_EXCEEDED'
    WHEN $12::bigint IS NOT NULL AND t.total_spent + $5::bigint > $12::bigint THEN 'CUMULATIVE_BUDGET_EXCEEDED'
    WHEN $14::bigint IS NOT NULL AND (t.delegation_mixed OR t.delegation_spent + $16::bigint > $14::bigint) THEN 'DELEGATION_BUDGET_EXCEEDED'
    ELSE 'ok' END AS outcome
  FROM totals t
),
ins AS (
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
  SELECT $1::text, $6::int, $7::jsonb, $4::text, 'allowed', $2::text, $3::text, $5::bigint, $8::text, $9::text FROM verdict WHERE outcome = 'ok'
  RETURNING sequence
),
head AS (
  UPDATE agreements SET ledger_sequence = $6::int, ledger_head = $8::text, updated_at = now()
  WHERE agreement_id = $1 AND EXISTS (SELECT 1 FROM ins)
),
spend AS (
  INSERT INTO agreement_spend (agreement_id, intent_id, currency, spent_minor)
  SELECT $1::text, $2::text, $3::text, $5::bigint FROM ins
  ON CONFLICT (agreement_id, intent_id) DO UPDATE SET spent_minor = agreement_spend.spent_minor + EXCLUDED.spent_minor
),
decision AS (
  INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision)
  SELECT $17::text, $4::text, $1::text, $18::text, $19::jsonb FROM ins WHERE $17::text IS NOT NULL
  ON CONFLICT (agent_id, action_id) DO NOTHING
  RETURNING 1
)
SELECT v.outcome, v.intent_spent::text AS intent_spent, v.total_spent::text AS total_spent,
       v.delegation_spent::text AS delegation_spent, v.delegation_mixed, (SELECT entry FROM existing) AS existing,
       EXISTS (SELECT 1 FROM decision) AS decision_stored
FROM verdict v`;
