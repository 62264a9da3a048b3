-- Round trip 2 of the spend transaction (src/store/ledger/spend.ts): writes the spends that
-- TypeScript decided. p_rows: one object per entry, {ag: the agreement's agent, a: agreement_id, e: the entry as hashed,
-- m: its amount in minor units, g/h/d: the verify answer to store (agent_id, request hash,
-- body), absent when none}. Inserts the entries (with their request hash) and opens their holds, moves each
-- agreement's head to its last entry of the batch (the narrow agreement_ledger_heads row: the
-- agreement's own row is only locked), adds to the intents' totals and stores the answers;
-- returns the (agent_id, action_id) of the answers stored (another may have been first).
-- On a Citus cluster the same writes are writ_spend_write_citus's (plain Postgres never plans
-- that branch).
CREATE OR REPLACE FUNCTION writ_spend_write(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    RETURN QUERY SELECT * FROM writ_spend_write_citus(p_rows);
    RETURN;
  END IF;
  INSERT INTO ledger_entries (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, request_hash)
  SELECT r.ag, r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash', r.h
  FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb, m bigint, h text);
  -- Each allowed entry opens its action's hold (ledger_open_holds, for the expiry sweep:
  -- src/store/ledger/open-holds.ts), in the same transaction as the entry.
  INSERT INTO ledger_open_holds (agent_id, agreement_id, action_id, held_at)
  SELECT r.ag, r.a, r.e->>'action_id', now() FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb)
  ON CONFLICT DO NOTHING;
  INSERT INTO agreement_ledger_heads AS x (agent_id, agreement_id, ledger_sequence, ledger_head)
  SELECT DISTINCT ON (r.ag, r.a) r.ag, r.a, (r.e->>'sequence')::int, r.e->>'entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb) ORDER BY r.ag, r.a, (r.e->>'sequence')::int DESC
  ON CONFLICT ON CONSTRAINT agreement_ledger_heads_pkey
  DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = EXCLUDED.updated_at;
  INSERT INTO agreement_spend AS t (agent_id, agreement_id, intent_id, currency, spent_minor)
  SELECT r.ag, r.a, r.e->>'intent_id', min(r.e->>'currency'), sum(r.m)::bigint
  FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb, m bigint) GROUP BY r.ag, r.a, r.e->>'intent_id'
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
