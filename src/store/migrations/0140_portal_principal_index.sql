-- Up Migration
-- The portal lists a principal's agents, delegations and agreements (src/store/record-views.ts,
-- docs/portal.md): agents are found by the principal they are registered with.
CREATE INDEX agents_principal_id_idx ON agents (principal_id);

-- Down Migration
DROP INDEX agents_principal_id_idx;
