-- Up Migration
-- The index of the burst rule's count (0080_verify_denial_index.sql) holds only what that
-- count reads: the DENYs that count (src/store/verify-reads.ts, the same predicate, so the
-- planner uses it). An ALLOW's answer, stored in every spend transaction, and a refusal that
-- does not count no longer add an entry to it (one B-tree insert fewer per ALLOW).
DROP INDEX verify_decisions_agent_recent;
CREATE INDEX verify_decisions_agent_recent ON verify_decisions (agent_id, created_at)
  WHERE decision->>'verdict' = 'DENY' AND decision->'burst_exempt' IS NULL;

-- Down Migration
DROP INDEX verify_decisions_agent_recent;
CREATE INDEX verify_decisions_agent_recent ON verify_decisions (agent_id, created_at);
