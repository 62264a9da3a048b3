-- writ_period_release on a Citus cluster (its caller documents the release; the same rows
-- change). Every statement names one agent as a constant (a PL/pgSQL variable, planned with its
-- value: the Citus layout gives this function custom plans) and one row by its key, so Citus
-- routes it to that agent's worker (a router plan, one task): the chain's agents are read from
-- the agreement's agent's rows; then per agent (in id order) its events of the action are locked
-- and read, and each is given back, with its calendar windows, row by row.
CREATE OR REPLACE FUNCTION writ_period_release_citus(p_agent text, p_agreement text, p_action text, p_amount bigint, p_hold bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_chain text[];
  v_agent text;
  e record;
  v_take bigint;
  v_released boolean;
  win jsonb;
BEGIN
  SELECT d.chain_agents INTO v_chain FROM agreements a
  JOIN delegations d ON d.agent_id = a.agent_id AND d.delegation_id = a.delegation_id
  WHERE a.agent_id = p_agent AND d.agent_id = p_agent AND a.agreement_id = p_agreement;
  FOREACH v_agent IN ARRAY ARRAY(SELECT DISTINCT u FROM unnest(ARRAY[p_agent] || coalesce(v_chain, '{}'::text[])) AS u WHERE u IS NOT NULL ORDER BY u) LOOP
    FOR e IN
      SELECT x.owner, x.currency, x.amount_minor, x.allowed_minor, x.windows FROM period_events x
      WHERE x.agent_id = v_agent AND x.agreement_id = p_agreement AND x.action_id = p_action AND NOT x.released
        AND (v_agent = p_agent OR x.owner LIKE '["delegation",%')
      ORDER BY x.owner
      FOR UPDATE
    LOOP
      v_take := CASE WHEN p_amount >= p_hold THEN e.amount_minor
                     ELSE LEAST(e.amount_minor, floor(e.allowed_minor::numeric * p_amount / p_hold)::bigint) END;
      v_released := e.amount_minor - v_take = 0;
      UPDATE period_events x SET amount_minor = x.amount_minor - v_take, released = v_released
      WHERE x.agent_id = v_agent AND x.agreement_id = p_agreement AND x.action_id = p_action AND x.owner = e.owner;
      FOR win IN SELECT w FROM jsonb_array_elements(e.windows) AS w LOOP
        UPDATE period_spend t SET spent_minor = t.spent_minor - v_take, payments = t.payments - (CASE WHEN v_released THEN 1 ELSE 0 END)
        WHERE t.agent_id = v_agent AND t.owner = e.owner AND t.currency = e.currency AND t.window_kind = win->>0 AND t.window_start = (win->>1)::timestamptz;
      END LOOP;
    END LOOP;
  END LOOP;
END
$$;
