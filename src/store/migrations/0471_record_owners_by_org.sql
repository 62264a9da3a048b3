-- Up Migration
-- record_owners carry the organization of the namespace the owning resource is in (docs/scale.md,
-- "Organization-scoped ids"): a delegation or agreement id names a record within one
-- organization, so its one owner is one per (org_id, kind, record_id). Subscription claims keep
-- org_id '' (a subscription id is the service's, unique across organizations).
ALTER TABLE record_owners ADD COLUMN org_id text NOT NULL DEFAULT '';
UPDATE record_owners o SET org_id = coalesce((SELECT d.org_id FROM delegations d WHERE d.delegation_id = o.record_id ORDER BY d.agent_id LIMIT 1), '')
  WHERE o.kind = 'delegation';
UPDATE record_owners o SET org_id = coalesce((SELECT a.org_id FROM agreements a WHERE a.agreement_id = o.record_id ORDER BY a.agent_id LIMIT 1), '')
  WHERE o.kind = 'agreement';
DROP INDEX record_owners_one_owner_idx;
CREATE UNIQUE INDEX record_owners_one_owner_idx ON record_owners (org_id, kind, record_id) WHERE kind <> 'subscription';
ALTER TABLE record_owners DROP CONSTRAINT record_owners_pkey, ADD PRIMARY KEY (org_id, kind, record_id, uid);

-- Down Migration
ALTER TABLE record_owners DROP CONSTRAINT record_owners_pkey, ADD PRIMARY KEY (kind, record_id, uid);
DROP INDEX record_owners_one_owner_idx;
CREATE UNIQUE INDEX record_owners_one_owner_idx ON record_owners (kind, record_id) WHERE kind <> 'subscription';
ALTER TABLE record_owners DROP COLUMN org_id;
