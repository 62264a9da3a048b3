-- Up Migration
-- The two statements of the group-committed spend transaction (src/store/ledger/spend.ts,
-- docs/verify.md "Group commit of ALLOWs"), as functions so that Postgres plans their queries
-- once per connection (PL/pgSQL keeps its plans; a generic plan, forced) while the caller still sends each with its neighbours in ONE round
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
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM delegations d WHERE d.delegation_id = ANY (p_delegations) ORDER BY d.delegation_id FOR NO KEY UPDATE;
  PERFORM 1 FROM agreements a WHERE a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
  -- Every lookup is a scalar subquery (an index probe per spend): an EXISTS could be planned
  -- as a hashed subplan that reads a whole table (verify_decisions, ledger_entries) per batch;
  -- no sequential scans either, whatever the statistics were when the plan was made.
  RETURN QUERY
  SELECT s.i, a.agreement_id IS NOT NULL, a.ledger_sequence, a.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
    (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1),
    coalesce((SELECT d.revoked_at IS NOT NULL FROM delegations d WHERE d.delegation_id = a.delegation_id), false),
    coalesce((SELECT true FROM revocations r WHERE r.agreement_id = s.agreement_id LIMIT 1), false),
    coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    (CASE WHEN s.dcur IS NULL THEN 0
      ELSE coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE b.delegation_id = a.delegation_id AND t.currency = s.dcur), 0) END)::text,
    CASE WHEN s.dcur IS NULL THEN false
      ELSE coalesce((SELECT true FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE b.delegation_id = a.delegation_id AND t.currency <> s.dcur AND t.spent_minor > 0 LIMIT 1), false) END,
    (SELECT e.entry FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id AND e.outcome = 'allowed'),
    coalesce((SELECT true FROM ledger_entries f WHERE f.agreement_id = s.agreement_id AND f.action_id = s.action_id AND f.outcome = 'failed'), false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id), false))
  FROM jsonb_to_recordset(p_spends) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text)
  -- LIMIT keeps the lookup a per-spend index probe (a generic plan may otherwise hash-join a seq scan of agreements).
  LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agreement_id = s.agreement_id LIMIT 1) a ON true
  ORDER BY s.i;
END $$;

-- Writes a batch's decided spends (the caller holds the rows' locks). p_rows is a jsonb array,
-- one object per entry, in the order of the batch: {a: agreement_id, e: the entry as hashed,
-- m: its amount in minor units, and, when the spend stores its verify answer, g: agent_id,
-- h: request hash, d: the answer}. It inserts the entries (their columns read from e), moves
-- each agreement's head to its last entry of the batch, adds to each intent's total the sum of
-- the batch's amounts on it (bigint: exact), and stores the answers unless one is already
-- stored for the action. Returns the (agent_id, action_id) of the answers stored.
CREATE FUNCTION writ_spend_write(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE h record;
BEGIN
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
  SELECT r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint);
  -- One index probe per agreement (a join could be planned as a seq scan of agreements).
  FOR h IN SELECT DISTINCT ON (r.a) r.a, (r.e->>'sequence')::int AS seq, r.e->>'entry_hash' AS head
           FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb) ORDER BY r.a, (r.e->>'sequence')::int DESC LOOP
    UPDATE agreements x SET ledger_sequence = h.seq, ledger_head = h.head, updated_at = now() WHERE x.agreement_id = h.a;
  END LOOP;
  INSERT INTO agreement_spend AS t (agreement_id, intent_id, currency, spent_minor)
  SELECT r.a, r.e->>'intent_id', min(r.e->>'currency'), sum(r.m)::bigint
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint) GROUP BY r.a, r.e->>'intent_id'
  ON CONFLICT ON CONSTRAINT agreement_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;
  RETURN QUERY
  WITH stored AS (
    INSERT INTO verify_decisions AS v (agent_id, action_id, agreement_id, request_hash, decision)
    SELECT r.g, r.e->>'action_id', r.a, r.h, r.d
    FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, g text, h text, d jsonb) WHERE r.g IS NOT NULL
    ON CONFLICT ON CONSTRAINT verify_decisions_pkey DO NOTHING
    RETURNING v.agent_id, v.action_id
  )
  SELECT s.agent_id, s.action_id FROM stored s;
END $$;

-- Down Migration
DROP FUNCTION writ_spend_write(jsonb);
DROP FUNCTION writ_spend_read(text[], text[], jsonb);
