-- Round trip 2 of the spend transaction (src/store/ledger/spend.ts), after writ_spend_write:
-- counts the recorded spends in their period windows. p_rows: one object per recorded spend and
-- owner with period limits, {g: the agreement's agent (its owners' too), a: agreement_id, x:
-- action_id, o: owner, c: currency, t: the decision time, m: the amount in minor units of c, w:
-- [[window kind, window start], ...] the calendar windows it counts in, u: until when a window
-- can need the event (keep_until; null: for good)}. Inserts the event (rolling windows and
-- releases read it) and raises each window's counter (spend and payments) under the owners'
-- locks. PL/pgSQL with a generic plan (see writ_period_read.sql): planned once per connection.
CREATE OR REPLACE FUNCTION writ_period_write(p_rows jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor, windows, keep_until)
  SELECT r.g, r.a, r.x, r.o, r.c, r.t, r.m, r.m, r.w, r.u
  FROM jsonb_to_recordset(p_rows) AS r(g text, a text, x text, o text, c text, t timestamptz, m bigint, w jsonb, u timestamptz);
  INSERT INTO period_spend AS t (agent_id, owner, currency, window_kind, window_start, spent_minor, payments)
  SELECT r.g, r.o, r.c, win->>0, (win->>1)::timestamptz, sum(r.m), count(*)
  FROM jsonb_to_recordset(p_rows) AS r(g text, o text, c text, m bigint, w jsonb) CROSS JOIN LATERAL jsonb_array_elements(r.w) AS win
  GROUP BY r.g, r.o, r.c, win->>0, (win->>1)::timestamptz
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT ON CONSTRAINT period_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor, payments = t.payments + EXCLUDED.payments;
END
$$;
