-- writ_spend_read_citus_here for a batch of agent p_agent's spends only, as a distributed
-- function of the agent (src/store/citus.ts): called from writ_spend_read_citus, Citus runs it
-- on the worker holding p_agent's shards (in the spend's transaction, force_delegation), where
-- every statement is on local shards.
CREATE OR REPLACE FUNCTION writ_spend_read_agent(p_agent text, p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY SELECT * FROM writ_spend_read_citus_here(p_delegations, p_agreements, p_spends);
END $$;
