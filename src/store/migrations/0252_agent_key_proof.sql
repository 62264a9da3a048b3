-- Up Migration
-- Proof of possession of an agent key (POST /v1/agents `key_proof`, src/core/registry/key-proof.ts).
-- key_proven: the registration carried a proof signed by the registered key. A proven
-- registration displaces a live UNPROVEN registration of the same key (a squat): that row is
-- kept (reports, inquiries and subscriptions name it) with status 'suspended', displaced_at and
-- displaced_by (the agent id that proved the key) set, and it can never be made active again.
-- A key is held by at most one row that is not displaced.
ALTER TABLE agents ADD COLUMN key_proven boolean NOT NULL DEFAULT false;
ALTER TABLE agents ADD COLUMN displaced_at timestamptz;
ALTER TABLE agents ADD COLUMN displaced_by text;
ALTER TABLE agents ADD CONSTRAINT agents_displaced_check CHECK ((displaced_at IS NULL) = (displaced_by IS NULL) AND (displaced_at IS NULL OR (status <> 'active' AND NOT key_proven)));
ALTER TABLE agents DROP CONSTRAINT agents_fingerprint_key;
CREATE UNIQUE INDEX agents_fingerprint_key ON agents (fingerprint) WHERE displaced_at IS NULL;
CREATE INDEX agents_fingerprint_idx ON agents (fingerprint);

-- Down Migration
DROP INDEX agents_fingerprint_idx;
DROP INDEX agents_fingerprint_key;
ALTER TABLE agents ADD CONSTRAINT agents_fingerprint_key UNIQUE (fingerprint);
ALTER TABLE agents DROP CONSTRAINT agents_displaced_check;
ALTER TABLE agents DROP COLUMN displaced_by;
ALTER TABLE agents DROP COLUMN displaced_at;
ALTER TABLE agents DROP COLUMN key_proven;
