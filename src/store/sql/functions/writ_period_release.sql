-- The period part of a release (src/store/ledger/holds.ts `releaseSpend`, the one release path,
-- under the agreement's lock): of action p_action of agreement p_agreement of agent p_agent
-- (every period row is read and written by that agent, the first column of its key), p_amount
-- of the action's hold p_hold (minor units of the intent's currency) is given back. Each of the
-- action's period events gives back the same share of what it counted (exactly p_amount when
-- the event is in the intent's currency; rounded down, never more, in another), from its amount
-- and from exactly the calendar windows it was counted in. An event whose amount reaches 0 is
-- released: it no longer counts as a payment (its window's payments drop by one) and rolling
-- windows skip it. Nothing happens for an action without period events. A stored ancestor's
-- windows are rows of the ancestor's own agent (shared by every agent below it): the action's
-- events under the agents of its delegation's chain (chain_agents) are released too, those of
-- delegation owners only. PL/pgSQL with a generic plan (see writ_period_read.sql).
CREATE OR REPLACE FUNCTION writ_period_release(p_agent text, p_agreement text, p_action text, p_amount bigint, p_hold bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_agents text[] := ARRAY[p_agent] || coalesce((SELECT d.chain_agents FROM agreements a
                                                 JOIN delegations d ON d.agent_id = a.agent_id AND d.delegation_id = a.delegation_id
                                                 WHERE a.agent_id = p_agent AND a.agreement_id = p_agreement), '{}'::text[]);
  v_agent text;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN PERFORM writ_period_release_citus(p_agent, p_agreement, p_action, p_amount, p_hold); RETURN; END IF;
  -- One statement per agent (each a probe of its rows' key): the agreement's agent (every owner),
  -- then each other agent of the chain (its delegation owners only).
  FOREACH v_agent IN ARRAY ARRAY(SELECT DISTINCT u FROM unnest(v_agents) AS u ORDER BY u) LOOP
    WITH cur AS (
      SELECT e.owner, e.amount_minor,
             CASE WHEN p_amount >= p_hold THEN e.amount_minor
                  ELSE LEAST(e.amount_minor, floor(e.allowed_minor::numeric * p_amount / p_hold)::bigint) END AS take
      FROM period_events e
      WHERE e.agent_id = v_agent AND e.agreement_id = p_agreement AND e.action_id = p_action AND NOT e.released
        AND (v_agent = p_agent OR e.owner LIKE '["delegation",%')
      FOR UPDATE
    ), rel AS (
      UPDATE period_events e SET amount_minor = e.amount_minor - c.take, released = (e.amount_minor - c.take = 0)
      FROM cur c
      WHERE e.agent_id = v_agent AND e.agreement_id = p_agreement AND e.action_id = p_action AND e.owner = c.owner
      RETURNING e.owner, e.currency, c.take, e.released, e.windows
    )
    UPDATE period_spend t SET spent_minor = t.spent_minor - r.take, payments = t.payments - (CASE WHEN r.released THEN 1 ELSE 0 END)
    FROM rel r CROSS JOIN LATERAL jsonb_array_elements(r.windows) AS win
    WHERE t.agent_id = v_agent AND t.owner = r.owner AND t.currency = r.currency AND t.window_kind = win->>0 AND t.window_start = (win->>1)::timestamptz;
  END LOOP;
END
$$;
