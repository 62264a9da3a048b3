-- The period part of a release (src/store/ledger/holds.ts `releaseSpend`, the one release path,
-- under the agreement's lock): of action p_action of agreement p_agreement of agent p_agent
-- (every period row is read and written by that agent, the first column of its key), p_amount
-- of the action's hold p_hold (minor units of the intent's currency) is given back. Each of the
-- action's period events gives back the same share of what it counted (exactly p_amount when
-- the event is in the intent's currency; rounded down, never more, in another), from its amount
-- and from exactly the calendar windows it was counted in. An event whose amount reaches 0 is
-- released: it no longer counts as a payment (its window's payments drop by one) and rolling
-- windows skip it. Nothing happens for an action without period events. PL/pgSQL with a
-- generic plan (see writ_period_read.sql).
CREATE OR REPLACE FUNCTION writ_period_release(p_agent text, p_agreement text, p_action text, p_amount bigint, p_hold bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  WITH cur AS (
    SELECT e.owner, e.amount_minor,
           CASE WHEN p_amount >= p_hold THEN e.amount_minor
                ELSE LEAST(e.amount_minor, floor(e.allowed_minor::numeric * p_amount / p_hold)::bigint) END AS take
    FROM period_events e
    WHERE e.agent_id = p_agent AND e.agreement_id = p_agreement AND e.action_id = p_action AND NOT e.released
    FOR UPDATE
  ), rel AS (
    UPDATE period_events e SET amount_minor = e.amount_minor - c.take, released = (e.amount_minor - c.take = 0)
    FROM cur c
    WHERE e.agent_id = p_agent AND e.agreement_id = p_agreement AND e.action_id = p_action AND e.owner = c.owner
    RETURNING e.agent_id, e.owner, e.currency, c.take, e.released, e.windows
  )
  UPDATE period_spend t SET spent_minor = t.spent_minor - r.take, payments = t.payments - (CASE WHEN r.released THEN 1 ELSE 0 END)
  FROM rel r CROSS JOIN LATERAL jsonb_array_elements(r.windows) AS win
  WHERE t.agent_id = r.agent_id AND t.owner = r.owner AND t.currency = r.currency AND t.window_kind = win->>0 AND t.window_start = (win->>1)::timestamptz;
END
$$;
