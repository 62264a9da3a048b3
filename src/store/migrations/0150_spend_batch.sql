-- Up Migration
-- The two statements of the group-committed spend transaction (src/store/ledger/spend.ts,
-- docs/verify.md "Group commit of ALLOWs"), as functions so that Postgres plans their queries
-- once per connection (PL/pgSQL keeps its plans; a generic plan is forced, the inputs being
-- one jsonb array each) while the caller still sends each with its neighbours in ONE round
-- trip: `BEGIN; SELECT * FROM writ_spend_read(…)` and `SELECT * FROM writ_spend_write(…); COMMIT`.

-- Locks every delegation row of p_delegations and every agreement row of p_agreements
-- (FOR NO KEY UPDATE, each set in id order: the lock order of src/store/ledger/index.ts), then
-- reads, in a query whose snapshot is taken after the locks are held (a VOLATILE function's
-- every query takes a new one), what the budget re-check needs for each spend of p_spends (a
-- jsonb array of {i, agreement_id, intent_id, action_id, currency, agent_id, parent, dcur}),
-- one row per spend in the order of i:
-- - the agreement row (agreement_found false: none), its head, status, revocation and delegation; the
--   currency of the spend's intent among its mandates (null: no such intent);
-- - delegation_revoked (the agreement's delegation), pushed_revocation (a stored pushed
--   principal revocation of the agreement);
-- - the totals as decimal text: the intent's (intent_spent), the agreement's in the spend's
--   currency (total_spent, when parent), the delegation's in its currency dcur and whether it
--   holds spend in any other currency (delegation_spent, delegation_mixed, when dcur);
-- - idempotency: the action's allowed entry (existing), whether a failed entry released it
--   (released), whether an answer is stored for (agent_id, action) (decided).
CREATE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spent text, delegation_mixed boolean, existing jsonb, released boolean, decided boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM delegations d WHERE d.delegation_id = ANY (p_delegations) ORDER BY d.delegation_id FOR NO KEY UPDATE;
  PERFORM 1 FROM agreements a WHERE a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
  RETURN QUERY
  SELECT s.i, a.agreement_id IS NOT NULL, a.ledger_sequence, a.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
    (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1),
    coalesce((SELECT d.revoked_at IS NOT NULL FROM delegations d WHERE d.delegation_id = a.delegation_id), false),
    EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = s.agreement_id),
    coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    (CASE WHEN s.dcur IS NULL THEN 0
      ELSE coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE b.delegation_id = a.delegation_id AND t.currency = s.dcur), 0) END)::text,
    CASE WHEN s.dcur IS NULL THEN false
      ELSE EXISTS (SELECT 1 FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                   WHERE b.delegation_id = a.delegation_id AND t.currency <> s.dcur AND t.spent_minor > 0) END,
    (SELECT e.entry FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id AND e.outcome = 'allowed'),
    EXISTS (SELECT 1 FROM ledger_entries f WHERE f.agreement_id = s.agreement_id AND f.action_id = s.action_id AND f.outcome = 'failed'),
    (s.agent_id IS NOT NULL AND EXISTS (SELECT 1 FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id))
  FROM jsonb_to_recordset(p_spends) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text)
  LEFT JOIN agreements a ON a.agreement_id = s.agreement_id
  ORDER BY s.i;
END $$;

-- Writes a batch's decided spends (the caller holds the rows' locks): the entries
-- (p_entries), each agreement's new head (p_heads), the additions to the intents' totals
-- (p_totals, one per intent: the sum of the batch's spends on it), and the verify answers
-- (p_decisions) unless one is already stored for the action. Returns the (agent_id,
-- action_id) of the answers stored.
CREATE FUNCTION writ_spend_write(p_entries jsonb, p_heads jsonb, p_totals jsonb, p_decisions jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
  SELECT e.agreement_id, e.sequence, e.entry, e.action_id, 'allowed', e.intent_id, e.currency, e.amount_minor, e.entry_hash, e.prev_entry_hash
  FROM jsonb_to_recordset(p_entries) AS e(agreement_id text, sequence int, entry jsonb, action_id text, intent_id text, currency text,
                                          amount_minor bigint, entry_hash text, prev_entry_hash text);
  UPDATE agreements a SET ledger_sequence = h.sequence, ledger_head = h.head, updated_at = now()
  FROM jsonb_to_recordset(p_heads) AS h(agreement_id text, sequence int, head text)
  WHERE a.agreement_id = h.agreement_id;
  INSERT INTO agreement_spend AS t (agreement_id, intent_id, currency, spent_minor)
  SELECT x.agreement_id, x.intent_id, x.currency, x.add FROM jsonb_to_recordset(p_totals) AS x(agreement_id text, intent_id text, currency text, add bigint)
  ON CONFLICT ON CONSTRAINT agreement_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;
  RETURN QUERY
  WITH stored AS (
    INSERT INTO verify_decisions AS v (agent_id, action_id, agreement_id, request_hash, decision)
    SELECT d.agent_id, d.action_id, d.agreement_id, d.request_hash, d.decision
    FROM jsonb_to_recordset(p_decisions) AS d(agent_id text, action_id text, agreement_id text, request_hash text, decision jsonb)
    ON CONFLICT ON CONSTRAINT verify_decisions_pkey DO NOTHING
    RETURNING v.agent_id, v.action_id
  )
  SELECT s.agent_id, s.action_id FROM stored s;
END $$;

-- Down Migration
DROP FUNCTION writ_spend_write(jsonb, jsonb, jsonb, jsonb);
DROP FUNCTION writ_spend_read(text[], text[], jsonb);
