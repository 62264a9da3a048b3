-- Up Migration
-- The `sha256:<64 hex>` checks without a counted repetition. Postgres runs `x ~
-- '^sha256:[0-9a-f]{64}$'` through a DFA it builds state by state for every value checked
-- (`{64}` unrolls to 64 states): about 11 us of CPU per value, three of them per spend (an
-- entry's hash and previous hash, the ledger head), nearly a third of Postgres's CPU on the
-- ALLOW path (perf, docs/verify.md). The same test as a length and a one-state loop costs
-- under 1 us. writ_is_sha256 is a plain SQL expression, inlined where it is used.
CREATE FUNCTION writ_is_sha256(v text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT length(v) = 71 AND v ~ '^sha256:[0-9a-f]+$' $$;

ALTER TABLE revocations DROP CONSTRAINT revocations_revocation_id_check, ADD CONSTRAINT revocations_revocation_id_check CHECK (writ_is_sha256(revocation_id));
ALTER TABLE agents DROP CONSTRAINT agents_fingerprint_check, ADD CONSTRAINT agents_fingerprint_check CHECK (writ_is_sha256(fingerprint));
ALTER TABLE reports DROP CONSTRAINT reports_evidence_hash_check, ADD CONSTRAINT reports_evidence_hash_check CHECK (writ_is_sha256(evidence_hash));
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_entry_hash_check, ADD CONSTRAINT ledger_entries_entry_hash_check CHECK (writ_is_sha256(entry_hash));
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_prev_entry_hash_check, ADD CONSTRAINT ledger_entries_prev_entry_hash_check CHECK (writ_is_sha256(prev_entry_hash));
ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_thumbprint_check, ADD CONSTRAINT issuer_keys_thumbprint_check CHECK (writ_is_sha256(thumbprint));
ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_jwt_hash_check, ADD CONSTRAINT mandates_issuer_jwt_hash_check CHECK (writ_is_sha256(issuer_jwt_hash));

-- Down Migration
ALTER TABLE revocations DROP CONSTRAINT revocations_revocation_id_check, ADD CONSTRAINT revocations_revocation_id_check CHECK (revocation_id ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE agents DROP CONSTRAINT agents_fingerprint_check, ADD CONSTRAINT agents_fingerprint_check CHECK (fingerprint ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE reports DROP CONSTRAINT reports_evidence_hash_check, ADD CONSTRAINT reports_evidence_hash_check CHECK (evidence_hash ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_entry_hash_check, ADD CONSTRAINT ledger_entries_entry_hash_check CHECK (entry_hash ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_prev_entry_hash_check, ADD CONSTRAINT ledger_entries_prev_entry_hash_check CHECK (prev_entry_hash ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_thumbprint_check, ADD CONSTRAINT issuer_keys_thumbprint_check CHECK (thumbprint ~ '^sha256:[0-9a-f]{64}$');
ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_jwt_hash_check, ADD CONSTRAINT mandates_issuer_jwt_hash_check CHECK (issuer_jwt_hash ~ '^sha256:[0-9a-f]{64}$');
DROP FUNCTION writ_is_sha256(text);
