-- writ_spend_write on a Citus cluster, run statement by statement from where it is called (writ_spend_write_citus chooses; its caller documents the writes; the same rows). Each
-- write is a single-row INSERT … VALUES, which Citus routes to the row's shard on the
-- connection the transaction already holds to that worker. (An INSERT … SELECT from the input
-- is planned on the coordinator and copied to the worker through a connection of its own: a
-- second connection that wrote makes Citus commit the transaction in two phases, even on one
-- worker.) Rows of one agent's batch are on one worker: one worker, one connection, one-phase
-- commit (test/integration/citus.test.ts counts it).
CREATE OR REPLACE FUNCTION writ_spend_write_citus_here(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
#variable_conflict use_column
DECLARE r record; v_agent text; v_action text;
BEGIN
  FOR r IN SELECT x.ag, x.a, x.e, x.m, x.h FROM jsonb_to_recordset(p_rows) AS x(ag text, a text, e jsonb, m bigint, h text) LOOP
    INSERT INTO ledger_entries (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, request_hash)
    VALUES (r.ag, r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash', r.h);
    INSERT INTO ledger_open_holds (agent_id, agreement_id, action_id, held_at) VALUES (r.ag, r.a, r.e->>'action_id', now()) ON CONFLICT DO NOTHING;
  END LOOP;
  FOR r IN SELECT DISTINCT ON (x.ag, x.a) x.ag, x.a, (x.e->>'sequence')::int AS seq, x.e->>'entry_hash' AS head
           FROM jsonb_to_recordset(p_rows) AS x(ag text, a text, e jsonb) ORDER BY x.ag, x.a, (x.e->>'sequence')::int DESC LOOP
    INSERT INTO agreement_ledger_heads AS y (agent_id, agreement_id, ledger_sequence, ledger_head) VALUES (r.ag, r.a, r.seq, r.head)
    ON CONFLICT ON CONSTRAINT agreement_ledger_heads_pkey
    DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = EXCLUDED.updated_at;
  END LOOP;
  FOR r IN SELECT x.ag, x.a, x.e->>'intent_id' AS intent, min(x.e->>'currency') AS currency, sum(x.m)::bigint AS m
           FROM jsonb_to_recordset(p_rows) AS x(ag text, a text, e jsonb, m bigint) GROUP BY x.ag, x.a, x.e->>'intent_id' LOOP
    INSERT INTO agreement_spend AS t (agent_id, agreement_id, intent_id, currency, spent_minor) VALUES (r.ag, r.a, r.intent, r.currency, r.m)
    ON CONFLICT ON CONSTRAINT agreement_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;
  END LOOP;
  FOR r IN SELECT x.g, x.e->>'action_id' AS act, x.a, x.h, x.d FROM jsonb_to_recordset(p_rows) AS x(a text, e jsonb, g text, h text, d jsonb) WHERE x.g IS NOT NULL LOOP
    v_agent := NULL;
    INSERT INTO verify_decisions AS v (agent_id, action_id, agreement_id, request_hash, decision) VALUES (r.g, r.act, r.a, r.h, r.d)
    ON CONFLICT ON CONSTRAINT verify_decisions_pkey DO NOTHING
    RETURNING v.agent_id, v.action_id INTO v_agent, v_action;
    IF v_agent IS NOT NULL THEN agent_id := v_agent; action_id := v_action; RETURN NEXT; END IF;
  END LOOP;
END $$;
