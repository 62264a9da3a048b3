-- writ_period_read on a Citus cluster (its caller documents the reads; the same rows). The
-- windows are read agent by agent (the owners' agents, `g`, in id order), each statement naming
-- the agent as a constant (a PL/pgSQL variable, planned with its value: the Citus layout gives
-- this function custom plans), so Citus routes it to that agent's worker (a router plan, one
-- task); a rolling window as writ_period_read sums it (its hours, its first hour's events, the events
-- not bucketed). A window of a stored ancestor is a row of the ancestor's own agent: read on its worker.
CREATE OR REPLACE FUNCTION writ_period_read_citus(p_windows jsonb)
RETURNS TABLE (k int, spent text, payments int, oldest timestamptz)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE v_agent text;
BEGIN
  FOR v_agent IN SELECT DISTINCT q.g FROM jsonb_to_recordset(p_windows) AS q(g text) WHERE q.g IS NOT NULL ORDER BY 1 LOOP
    RETURN QUERY
    SELECT q.k, x.spent_minor::text, x.payments, NULL::timestamptz
    FROM jsonb_to_recordset(p_windows) AS q(k int, g text, o text, c text, w text, s timestamptz, since timestamptz)
    CROSS JOIN LATERAL (
      SELECT x.spent_minor, x.payments FROM period_spend x
      WHERE x.agent_id = v_agent AND x.owner = q.o AND x.currency = q.c AND x.window_kind = q.w AND x.window_start = q.s LIMIT 1
    ) x
    WHERE q.g = v_agent AND q.since IS NULL;
    RETURN QUERY
    SELECT q.k, (b.spent + e.spent + u.spent)::text, (b.n + e.n + u.n)::int, LEAST(f.oldest, u.oldest)
    FROM jsonb_to_recordset(p_windows) AS q(k int, g text, o text, c text, w text, s timestamptz, since timestamptz)
    CROSS JOIN LATERAL (
      SELECT coalesce(sum(x.spent_minor), 0) AS spent, coalesce(sum(x.payments), 0) AS n FROM period_spend x
      WHERE x.agent_id = v_agent AND x.owner = q.o AND x.currency = q.c AND x.window_kind = 'bucket@PT1H' AND x.window_start > date_trunc('hour', q.since, 'UTC')
    ) b CROSS JOIN LATERAL (
      SELECT coalesce(sum(e.amount_minor), 0) AS spent, count(*) AS n FROM period_events e
      WHERE e.agent_id = v_agent AND e.owner = q.o AND e.currency = q.c AND e.at > q.since AND e.at < date_trunc('hour', q.since, 'UTC') + interval '1 hour' AND NOT e.released AND e.bucketed
    ) e CROSS JOIN LATERAL (
      SELECT min(e.at) AS oldest FROM period_events e
      WHERE e.agent_id = v_agent AND e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released AND e.bucketed
    ) f CROSS JOIN LATERAL (
      SELECT coalesce(sum(e.amount_minor), 0) AS spent, count(*) AS n, min(e.at) AS oldest FROM period_events e
      WHERE e.agent_id = v_agent AND e.owner = q.o AND e.currency = q.c AND e.at > q.since AND NOT e.released AND NOT e.bucketed
    ) u
    WHERE q.g = v_agent AND q.since IS NOT NULL;
  END LOOP;
END
$$;
