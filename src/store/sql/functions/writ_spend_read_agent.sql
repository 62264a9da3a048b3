-- writ_spend_read_citus_here for a batch of spends of agents whose shards are on one worker, as
-- a distributed function of the first of them, p_agent (src/store/citus.ts): called from
-- writ_spend_read_citus, Citus runs it on the worker holding p_agent's shards (in the spend's
-- transaction, force_delegation). There, a batch that locks no delegation is read by this
-- node's read function (writ_citus_local_fn 'read': one call for the batch, shard group by shard
-- group, in the order of their shard ids, each group's agents in id order: the lock order of every
-- Citus path, as writ_spend_read_citus_here locks; its statements name the local shards, planned
-- once per session by Postgres alone); any other batch, or one with an agent whose shards are not
-- on this node, by writ_spend_read_citus_here, every statement through Citus (which refuses there
-- a statement of another agent than p_agent: the group commit then writes the batch again in
-- halves).
CREATE OR REPLACE FUNCTION writ_spend_read_agent(p_agent text, p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = auto AS $$
DECLARE v_agents text[] := ARRAY(SELECT DISTINCT s.ag FROM jsonb_to_recordset(p_spends) AS s(ag text) ORDER BY 1);
  v_fn text := CASE WHEN cardinality(p_delegations) = 0 THEN writ_citus_local_fn('read', v_agents) END;
BEGIN
  IF v_fn IS NULL THEN
    RETURN QUERY SELECT * FROM writ_spend_read_citus_here(p_delegations, p_agreements, p_spends);
    RETURN;
  END IF;
  RETURN QUERY EXECUTE format('SELECT * FROM public.%I($1, $2, $3)', v_fn) USING v_agents, p_agreements, p_spends;
END $$;
