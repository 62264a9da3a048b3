-- Moves the totals of agreements into or out of the running totals of their stored ancestors
-- (writ_chain_spend_add with p_sign × each intent's total): of agreement p_agreement of agent
-- p_agent, or (p_agreement null) of every agreement bound to delegation p_delegation of that
-- agent, whose rows it locks first (by id, the spend transaction's order), so no spend of
-- theirs is in flight while their totals move. Called around a change of what is above the
-- agreements (src/store/chain-spend.ts): -1 before an agreement is bound to another delegation,
-- a delegation's stored chain changes or a ledger is imported, +1 after, in the same
-- transaction.
CREATE OR REPLACE FUNCTION writ_chain_spend_move(p_agent text, p_delegation text, p_agreement text, p_sign int)
RETURNS void LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
DECLARE v_rows jsonb;
BEGIN
  IF p_agreement IS NULL THEN
    PERFORM 1 FROM agreements a WHERE a.agent_id = p_agent AND a.delegation_id = p_delegation ORDER BY a.agreement_id FOR NO KEY UPDATE;
  END IF;
  SELECT coalesce(jsonb_agg(jsonb_build_object('ag', p_agent, 'a', t.agreement_id, 'c', t.currency, 'm', p_sign * t.spent_minor)), '[]'::jsonb) INTO v_rows
  FROM agreements b JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
  WHERE b.agent_id = p_agent AND t.agent_id = p_agent
    AND (CASE WHEN p_agreement IS NULL THEN b.delegation_id = p_delegation ELSE b.agreement_id = p_agreement END);
  PERFORM writ_chain_spend_add(v_rows);
END $$;
