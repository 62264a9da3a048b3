-- writ_period_write on a Citus cluster (its caller documents the writes; the same rows). Each
-- write is a single-row statement naming its row's agent (INSERT … VALUES, or an UPDATE by the
-- row's key), which Citus routes to that agent's shard on the connection the transaction
-- already holds to the worker (an INSERT … SELECT from the input would be planned on the
-- coordinator and copied through a connection of its own: see writ_spend_write_citus.sql).
-- Counters are raised in key order, as writ_period_write raises them: one the read found by an
-- UPDATE that must find it (a missing one aborts the transaction), the others inserted.
CREATE OR REPLACE FUNCTION writ_period_write_citus(p_events jsonb, p_counters jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM jsonb_to_recordset(p_events) AS r(g text, a text, x text, o text, c text, t timestamptz, m bigint, w jsonb, u timestamptz, b boolean) LOOP
    INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor, windows, keep_until, bucketed)
    VALUES (r.g, r.a, r.x, r.o, r.c, r.t, r.m, r.m, r.w, r.u, r.b);
  END LOOP;
  FOR r IN SELECT * FROM jsonb_to_recordset(p_counters) AS c(g text, o text, c text, w text, s timestamptz, m bigint, n int, e boolean)
           ORDER BY 1, 2, 3, 4, 5 LOOP
    IF r.e THEN
      UPDATE period_spend t SET spent_minor = t.spent_minor + r.m, payments = t.payments + r.n
      WHERE t.agent_id = r.g AND t.owner = r.o AND t.currency = r.c AND t.window_kind = r.w AND t.window_start = r.s;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'writ_period_write: period counters found by the read are gone (% from %)', r.w, r.s;
      END IF;
    ELSE
      INSERT INTO period_spend AS t (agent_id, owner, currency, window_kind, window_start, spent_minor, payments)
      VALUES (r.g, r.o, r.c, r.w, r.s, r.m, r.n)
      ON CONFLICT ON CONSTRAINT period_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor, payments = t.payments + EXCLUDED.payments;
    END IF;
  END LOOP;
END
$$;
