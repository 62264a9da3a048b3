-- The period windows of a spend batch (src/store/ledger/spend.ts), read in round trip 1 after
-- writ_spend_read took the locks (the owners' rows: the agreement's for an intent's windows, the
-- delegation's for a delegation's). p_windows: one object per window, {k: its place, o: owner,
-- c: currency, w: window kind, s: a calendar window's start, or since: a rolling window's
-- exclusive lower bound}. Returns per window its spend (minor units, text), its payments and,
-- for a rolling window, its oldest counted instant. Each is an index probe (period_spend's key)
-- or a range of period_events_window bounded by the window.
CREATE OR REPLACE FUNCTION writ_period_read(p_windows jsonb)
RETURNS TABLE (k int, spent text, payments int, oldest timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT q.k,
    CASE WHEN q.since IS NULL
      THEN coalesce((SELECT x.spent_minor FROM period_spend x WHERE x.owner = q.o AND x.currency = q.c AND x.window_kind = q.w AND x.window_start = q.s), 0)::text
      ELSE (SELECT coalesce(sum(e.amount_minor), 0)::text FROM period_events e WHERE e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released) END,
    CASE WHEN q.since IS NULL
      THEN coalesce((SELECT x.payments FROM period_spend x WHERE x.owner = q.o AND x.currency = q.c AND x.window_kind = q.w AND x.window_start = q.s), 0)
      ELSE (SELECT count(*)::int FROM period_events e WHERE e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released) END,
    CASE WHEN q.since IS NULL THEN NULL
      ELSE (SELECT min(e.at) FROM period_events e WHERE e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released) END
  FROM jsonb_to_recordset(p_windows) AS q(k int, o text, c text, w text, s timestamptz, since timestamptz)
  ORDER BY q.k
$$;
