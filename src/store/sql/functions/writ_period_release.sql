-- The period part of a release (the `failed` outcome: src/store/ledger/outcome.ts, under the
-- agreement's lock): marks the action's period events released and takes each one's amount and
-- payment out of exactly the calendar windows it was counted in (rolling windows skip released
-- events). Nothing happens for an action without period events or one released before.
CREATE OR REPLACE FUNCTION writ_period_release(p_agreement text, p_action text)
RETURNS void
LANGUAGE sql VOLATILE AS $$
  WITH rel AS (
    UPDATE period_events e SET released = true
    WHERE e.agreement_id = p_agreement AND e.action_id = p_action AND NOT e.released
    RETURNING e.owner, e.currency, e.amount_minor, e.windows
  )
  UPDATE period_spend t SET spent_minor = t.spent_minor - r.amount_minor, payments = t.payments - 1
  FROM rel r CROSS JOIN LATERAL jsonb_array_elements(r.windows) AS win
  WHERE t.owner = r.owner AND t.currency = r.currency AND t.window_kind = win->>0 AND t.window_start = (win->>1)::timestamptz;
$$;
