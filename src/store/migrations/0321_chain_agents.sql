-- Up Migration
-- delegations.chain_agents: the agent of each link of chain_ids (same order, root first), as
-- stored when the delegation was stored (NULL for a link not stored then). The spend
-- transaction locks and reads a chain's ancestors by (agent_id, delegation_id), the key of
-- delegations (0320_agent_keys.sql), never by the id alone (src/store/sql/functions/
-- writ_spend_read.sql). An ancestor it cannot address so is not stored for the spend
-- (CHAIN_BROKEN, fail closed) until the child is stored again.
ALTER TABLE delegations ADD COLUMN chain_agents text[] NOT NULL DEFAULT '{}';
UPDATE delegations d SET chain_agents = ARRAY(
  SELECT p.agent_id FROM unnest(d.chain_ids) WITH ORDINALITY AS u(id, n) LEFT JOIN delegations p ON p.delegation_id = u.id ORDER BY u.n)
WHERE cardinality(d.chain_ids) > 0;
ALTER TABLE delegations ADD CONSTRAINT delegations_chain_agents_check CHECK (cardinality(chain_agents) = cardinality(chain_ids));

-- writ_subtree_spend takes the delegation's agent too: another signature, so the old one goes.
DROP FUNCTION IF EXISTS writ_subtree_spend(text);

-- Down Migration
DROP FUNCTION IF EXISTS writ_subtree_spend(text, text);
ALTER TABLE delegations DROP CONSTRAINT delegations_chain_agents_check;
ALTER TABLE delegations DROP COLUMN chain_agents;
