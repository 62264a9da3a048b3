-- Up Migration
-- Revocations carry the organization (or agent) of the record they revoke (docs/scale.md,
-- "Organization-scoped ids"): an id names a record within one organization.
-- - delegation_revocations: keyed (org_id, delegation_id), org_id '' for a record without an
--   organization. A revocation of an id not stored yet revokes it when stored in that
--   organization only. Still a Citus reference table (src/store/citus.ts): no foreign key, no trigger.
-- - revocations (pushed principal revocations): the agent and organization of the agreement
--   the mandate hash named when it was stored.
ALTER TABLE delegation_revocations ADD COLUMN org_id text NOT NULL DEFAULT '';
UPDATE delegation_revocations r SET org_id = coalesce(
  (SELECT coalesce(d.org_id, '') FROM delegations d WHERE d.delegation_id = r.delegation_id LIMIT 1),
  (SELECT coalesce(d.org_id, '') FROM delegations d WHERE d.chain_ids @> ARRAY[r.delegation_id] LIMIT 1),
  '');
ALTER TABLE delegation_revocations DROP CONSTRAINT delegation_revocations_pkey, ADD PRIMARY KEY (org_id, delegation_id);

ALTER TABLE revocations ADD COLUMN agent_id text, ADD COLUMN org_id text;
UPDATE revocations r SET agent_id = a.agent_id, org_id = a.org_id FROM agreements a WHERE a.agreement_id = r.agreement_id;

-- Down Migration
ALTER TABLE revocations DROP COLUMN org_id, DROP COLUMN agent_id;
ALTER TABLE delegation_revocations DROP CONSTRAINT delegation_revocations_pkey, ADD PRIMARY KEY (delegation_id);
ALTER TABLE delegation_revocations DROP COLUMN org_id;
