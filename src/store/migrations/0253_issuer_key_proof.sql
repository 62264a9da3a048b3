-- Up Migration
-- Proof of possession of an issuer key (POST /v1/orgs/{org_id}/issuer-keys `key_proof`,
-- src/core/registry/key-proof.ts). key_proven: the registration carried a proof signed by the
-- registered key. A proven registration displaces a live UNPROVEN registration of the same key
-- by another wallet (a squat: it would make that wallet the issuer of every mandate the key
-- signs): that row is kept (recorded mandates name it) but revoked, with displaced_at and
-- displaced_by (the organization that proved the key) set. A key is held by at most one row
-- that is not displaced.
ALTER TABLE issuer_keys ADD COLUMN key_proven boolean NOT NULL DEFAULT false;
ALTER TABLE issuer_keys ADD COLUMN displaced_at timestamptz;
ALTER TABLE issuer_keys ADD COLUMN displaced_by text;
ALTER TABLE issuer_keys ADD CONSTRAINT issuer_keys_displaced_check CHECK ((displaced_at IS NULL) = (displaced_by IS NULL) AND (displaced_at IS NULL OR (revoked_at IS NOT NULL AND NOT key_proven)));
ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_thumbprint_key;
CREATE UNIQUE INDEX issuer_keys_thumbprint_key ON issuer_keys (thumbprint) WHERE displaced_at IS NULL;

-- Down Migration
DROP INDEX issuer_keys_thumbprint_key;
ALTER TABLE issuer_keys ADD CONSTRAINT issuer_keys_thumbprint_key UNIQUE (thumbprint);
ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_displaced_check;
ALTER TABLE issuer_keys DROP COLUMN displaced_by;
ALTER TABLE issuer_keys DROP COLUMN displaced_at;
ALTER TABLE issuer_keys DROP COLUMN key_proven;
