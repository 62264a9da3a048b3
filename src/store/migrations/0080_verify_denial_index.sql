-- Up Migration
-- The REVOKE policy counts an agent's denied attempts in the last minute on every verify:
-- an index on (agent_id, created_at) keeps that count a short range scan.
CREATE INDEX verify_decisions_agent_recent ON verify_decisions (agent_id, created_at);

-- Down Migration
DROP INDEX verify_decisions_agent_recent;
