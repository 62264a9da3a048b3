-- The period windows of a spend batch (src/store/ledger/spend.ts), read in round trip 1 after
-- writ_spend_read took the locks (the owners' rows: the agreement's for an intent's windows, the
-- delegation's for a delegation's). p_windows: one object per window, {k: its place, g: the
-- owner's agent (the first column of every period row's key), o: owner, c: currency, w: window
-- kind, s: a calendar window's start, or since: a rolling window's exclusive lower bound}.
-- Returns per window its spend (minor units, text), its payments and, for a rolling window, its
-- oldest counted instant; a calendar window without a counter yet returns no row (nothing
-- counted). A calendar window is one index probe (period_spend's key). A rolling window
-- (migrations/0600_period_hour_buckets.sql) is, with h the UTC hour holding since, the hour
-- counters after h (a range of period_spend's key: at most 24 a day of the window), the
-- bucketed events of hour h after since (a range of period_events_window: at most an hour's),
-- the events not bucketed after since (period_events_unbucketed: fewer than
-- WRIT_PERIOD_HOUR_COUNTERS_FROM, src/store/ledger/periods.ts, as the spend transaction buckets
-- the rest), and its oldest instant is the first entry after since of each of those two
-- indexes: each bounded whatever the payments in the window. PL/pgSQL with a generic plan, as the spend functions: its statement is
-- planned once per connection, not on every call (a LANGUAGE sql function's body is planned on
-- each call).
CREATE OR REPLACE FUNCTION writ_period_read(p_windows jsonb)
RETURNS TABLE (k int, spent text, payments int, oldest timestamptz)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN RETURN QUERY SELECT * FROM writ_period_read_citus(p_windows); RETURN; END IF;
  RETURN QUERY
  WITH q AS (SELECT * FROM jsonb_to_recordset(p_windows) AS q(k int, g text, o text, c text, w text, s timestamptz, since timestamptz))
  -- LIMIT 1 (the key is unique) keeps the lateral a probe per window, whatever the table's size
  -- was when the generic plan was made.
  SELECT q.k, x.spent_minor::text, x.payments, NULL::timestamptz
  FROM q CROSS JOIN LATERAL (
    SELECT x.spent_minor, x.payments FROM period_spend x
    WHERE x.agent_id = q.g AND x.owner = q.o AND x.currency = q.c AND x.window_kind = q.w AND x.window_start = q.s LIMIT 1
  ) x
  WHERE q.since IS NULL
  UNION ALL
  SELECT q.k, (b.spent + e.spent + u.spent)::text, (b.n + e.n + u.n)::int, LEAST(f.oldest, u.oldest)
  FROM q CROSS JOIN LATERAL (
    SELECT coalesce(sum(x.spent_minor), 0) AS spent, coalesce(sum(x.payments), 0) AS n FROM period_spend x
    WHERE x.agent_id = q.g AND x.owner = q.o AND x.currency = q.c AND x.window_kind = 'bucket@PT1H' AND x.window_start > date_trunc('hour', q.since, 'UTC')
  ) b CROSS JOIN LATERAL (
    SELECT coalesce(sum(e.amount_minor), 0) AS spent, count(*) AS n FROM period_events e
    WHERE e.agent_id = q.g AND e.owner = q.o AND e.currency = q.c AND e.at > q.since AND e.at < date_trunc('hour', q.since, 'UTC') + interval '1 hour' AND NOT e.released AND e.bucketed
  ) e CROSS JOIN LATERAL (
    SELECT min(e.at) AS oldest FROM period_events e
    WHERE e.agent_id = q.g AND e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released AND e.bucketed
  ) f CROSS JOIN LATERAL (
    SELECT coalesce(sum(e.amount_minor), 0) AS spent, count(*) AS n, min(e.at) AS oldest FROM period_events e
    WHERE e.agent_id = q.g AND e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released AND NOT e.bucketed
  ) u
  WHERE q.since IS NOT NULL;
END
$$;
