-- Up Migration
-- Claim tables (docs/scale.md, "Keys"): the uniqueness that spans agents is no longer a key of
-- a per-agent table (which a distributed table cannot enforce) but a row of a small table,
-- written in the transaction that stores the record (src/store/record-ids.ts):
-- - record_ids: one row per delegation or agreement id, with the organization and the agent
--   whose row holds it. Its key is (kind, record_id): an id is still unique across
--   organizations (docs/threat-model.md, row 11); org_id is carried for the per-organization key
--   the ids are moving to.
-- - mandate_hashes: the two identities of a recorded AP2 mandate (what the issuer signed, and
--   the issuer JWT's text), each recorded once, whichever agent presents the mandate.
-- The per-agent tables keep plain indexes on those columns for their look-ups.
CREATE TABLE record_ids (
  kind      text NOT NULL CHECK (kind IN ('delegation', 'agreement')),
  record_id text NOT NULL CHECK (length(record_id) BETWEEN 1 AND 256),
  org_id    text,
  agent_id  text NOT NULL,
  PRIMARY KEY (kind, record_id)
);
INSERT INTO record_ids (kind, record_id, org_id, agent_id) SELECT 'delegation', delegation_id, org_id, agent_id FROM delegations;
INSERT INTO record_ids (kind, record_id, org_id, agent_id) SELECT 'agreement', agreement_id, org_id, agent_id FROM agreements;
DROP INDEX delegations_delegation_id_key;
CREATE INDEX delegations_delegation_id_idx ON delegations (delegation_id);
DROP INDEX agreements_agreement_id_key;
CREATE INDEX agreements_agreement_id_idx ON agreements (agreement_id);

CREATE TABLE mandate_hashes (
  kind          text NOT NULL CHECK (kind IN ('mandate', 'issuer_jwt')),
  hash          text NOT NULL CHECK (writ_is_sha256(hash)),
  agent_id      text NOT NULL,
  delegation_id text NOT NULL,
  PRIMARY KEY (kind, hash)
);
INSERT INTO mandate_hashes (kind, hash, agent_id, delegation_id) SELECT 'mandate', mandate_hash, agent_id, delegation_id FROM mandates WHERE mandate_hash IS NOT NULL;
INSERT INTO mandate_hashes (kind, hash, agent_id, delegation_id) SELECT 'issuer_jwt', issuer_jwt_hash, agent_id, delegation_id FROM mandates;
ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_jwt_hash_key;
DROP INDEX mandates_mandate_hash_key;
CREATE INDEX mandates_mandate_hash_idx ON mandates (mandate_hash);

-- Down Migration
DROP INDEX mandates_mandate_hash_idx;
CREATE UNIQUE INDEX mandates_mandate_hash_key ON mandates (mandate_hash);
ALTER TABLE mandates ADD CONSTRAINT mandates_issuer_jwt_hash_key UNIQUE (issuer_jwt_hash);
DROP TABLE mandate_hashes;
DROP INDEX agreements_agreement_id_idx;
CREATE UNIQUE INDEX agreements_agreement_id_key ON agreements (agreement_id);
DROP INDEX delegations_delegation_id_idx;
CREATE UNIQUE INDEX delegations_delegation_id_key ON delegations (delegation_id);
DROP TABLE record_ids;
