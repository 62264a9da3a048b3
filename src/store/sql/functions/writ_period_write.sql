-- Round trip 2 of the spend transaction (src/store/ledger/spend.ts), after writ_spend_write:
-- counts the recorded spends in their period windows, under the owners' locks (held since
-- round trip 1, whose read found the counters). p_events: one object per recorded spend and
-- owner with period limits, {g: the owner's agent (the first column of its rows' keys), a:
-- agreement_id, x: action_id, o: owner, c: currency, t: the decision time, m: the amount in
-- minor units of c, w: [[window kind, window start], ...] the calendar windows it counts in
-- (with its hour counter when b), u: until when a window can need the event (keep_until; null:
-- for good), b: counted in its hour's counter (an owner with a rolling limit:
-- migrations/0600_period_hour_buckets.sql)}: inserted (rolling windows and releases read
-- them). p_counters: one object per calendar window (and hour counter) the batch counts in,
-- {g, o, c, w: window kind, s: window start, m: the batch's spend in it (minor units), n: its
-- payments, e: the read found the counter}: the counters the read found are
-- raised in place by one plain UPDATE (a probe of period_spend's key each; no speculative
-- insertion and tuple lock of INSERT ... ON CONFLICT, no anti-join of the batch's counters
-- against each other), and it must raise every one of them (they cannot go while the owners'
-- locks are held: a missing one aborts the transaction); the others are inserted, still with
-- ON CONFLICT, so that a counter is raised exactly once. PL/pgSQL with a generic plan (see
-- writ_period_read.sql), its joins nested loops over the given rows (every lookup a probe).
CREATE OR REPLACE FUNCTION writ_period_write(p_events jsonb, p_counters jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE v_found bigint; v_new bigint; v_raised bigint;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN PERFORM writ_period_write_citus(p_events, p_counters); RETURN; END IF;
  INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor, windows, keep_until, bucketed)
  SELECT r.g, r.a, r.x, r.o, r.c, r.t, r.m, r.m, r.w, r.u, r.b
  FROM jsonb_to_recordset(p_events) AS r(g text, a text, x text, o text, c text, t timestamptz, m bigint, w jsonb, u timestamptz, b boolean);
  SELECT count(*) FILTER (WHERE x @> '{"e": true}'), count(*) FILTER (WHERE NOT x @> '{"e": true}')
    INTO v_found, v_new FROM jsonb_array_elements(p_counters) AS x;
  IF v_found > 0 THEN
    UPDATE period_spend t SET spent_minor = t.spent_minor + c.m, payments = t.payments + c.n
    FROM jsonb_to_recordset(p_counters) AS c(g text, o text, c text, w text, s timestamptz, m bigint, n int, e boolean)
    WHERE c.e AND t.agent_id = c.g AND t.owner = c.o AND t.currency = c.c AND t.window_kind = c.w AND t.window_start = c.s;
    GET DIAGNOSTICS v_raised = ROW_COUNT;
    -- Under the owners' locks a counter the read found is still there: a missing one aborts
    -- the batch rather than leave a spend uncounted.
    IF v_raised <> v_found THEN
      RAISE EXCEPTION 'writ_period_write: % of % period counters found by the read are gone', v_found - v_raised, v_found;
    END IF;
  END IF;
  IF v_new > 0 THEN
    INSERT INTO period_spend AS t (agent_id, owner, currency, window_kind, window_start, spent_minor, payments)
    SELECT c.g, c.o, c.c, c.w, c.s, c.m, c.n
    FROM jsonb_to_recordset(p_counters) AS c(g text, o text, c text, w text, s timestamptz, m bigint, n int, e boolean)
    WHERE NOT c.e
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ON CONSTRAINT period_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor, payments = t.payments + EXCLUDED.payments;
  END IF;
END
$$;
