-- Up Migration
-- Ids per organization (docs/scale.md, "Organization-scoped ids"; docs/threat-model.md, row 11):
-- a delegation or agreement id is claimed within its organization, so two organizations may
-- each hold `agr-1`; within one organization an id stays unique. org_id '' stands for records
-- stored without an organization. Every look-up by id is made within the record's organization
-- or by its agent (migrations 0470, 0471).
UPDATE record_ids SET org_id = '' WHERE org_id IS NULL;
ALTER TABLE record_ids ALTER COLUMN org_id SET DEFAULT '', ALTER COLUMN org_id SET NOT NULL;
ALTER TABLE record_ids DROP CONSTRAINT record_ids_pkey, ADD PRIMARY KEY (org_id, kind, record_id);

-- Down Migration
-- Fails while two organizations hold the same id (the global key cannot hold both).
ALTER TABLE record_ids DROP CONSTRAINT record_ids_pkey, ADD PRIMARY KEY (kind, record_id);
ALTER TABLE record_ids ALTER COLUMN org_id DROP NOT NULL, ALTER COLUMN org_id DROP DEFAULT;
UPDATE record_ids SET org_id = NULL WHERE org_id = '';
