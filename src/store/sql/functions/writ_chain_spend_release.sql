-- A release of agent p_agent's agreement p_agreement (src/store/ledger/holds.ts, releaseSpend):
-- gives p_amount minor units of intent p_intent back to the running totals of the stored
-- ancestors above it (writ_chain_spend_add), and sends the agent's change notice from the node
-- this runs on: a lower total must reach the caches (writ_spend_released), and on a Citus cluster
-- the trigger of the agent's shard does not send it (a release under an ancestor of another
-- agent commits in two phases, where a NOTIFY on the worker is refused); this session is the
-- coordinator's, which commits after the workers' PREPARE and is never prepared itself.
CREATE OR REPLACE FUNCTION writ_chain_spend_release(p_agent text, p_agreement text, p_intent text, p_amount bigint)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM writ_notify_agent(p_agent);
  PERFORM writ_chain_spend_add(jsonb_build_array(jsonb_build_object('ag', p_agent, 'a', p_agreement, 'i', p_intent, 'm', -p_amount)));
END $$;
