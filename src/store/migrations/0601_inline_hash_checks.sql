-- Up Migration
-- The `sha256:<64 hex>` checks written out (the test of writ_is_sha256, migration 0170, the same
-- values accepted) instead of calling writ_is_sha256. A CHECK is prepared again by every
-- statement that writes its table (the constraint's stored expression read back, planned,
-- compiled): calling a LANGUAGE sql function there makes each such statement inline it,
-- parsing and analysing the function's text again. The ALLOW path writes three of them per
-- batch on one Postgres (an entry's hash, previous hash and request hash, and the ledger head),
-- and on a Citus worker once per shard group a batch touches (perf of a worker's backends in
-- `npm run bench:verify`: parsing and analysing SQL, much of it the inlining, a few per cent of
-- a worker's CPU, the checks as a whole 9 %: docs/scale.md). writ_is_sha256 stays, for queries.
-- In a DO block: a Citus coordinator propagates DDL on a distributed table from PL/pgSQL, not
-- among several commands of one query string; and it refuses ADD CONSTRAINT beside another
-- subcommand of one ALTER TABLE ("cannot execute ADD CONSTRAINT command with other
-- subcommands"), so each check is dropped and added by commands of their own.
DO $$ BEGIN
  ALTER TABLE ack_keys DROP CONSTRAINT ack_keys_thumbprint_check;
  ALTER TABLE ack_keys ADD CONSTRAINT ack_keys_thumbprint_check CHECK (length(thumbprint) = 71 AND thumbprint ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE agents DROP CONSTRAINT agents_fingerprint_check;
  ALTER TABLE agents ADD CONSTRAINT agents_fingerprint_check CHECK (length(fingerprint) = 71 AND fingerprint ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_ledger_head_check;
  ALTER TABLE agreement_ledger_heads ADD CONSTRAINT agreement_ledger_heads_ledger_head_check CHECK (length(ledger_head) = 71 AND ledger_head ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE approvals DROP CONSTRAINT approvals_request_hash_check;
  ALTER TABLE approvals ADD CONSTRAINT approvals_request_hash_check CHECK (length(request_hash) = 71 AND request_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_thumbprint_check;
  ALTER TABLE issuer_keys ADD CONSTRAINT issuer_keys_thumbprint_check CHECK (length(thumbprint) = 71 AND thumbprint ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_entry_hash_check;
  ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_entry_hash_check CHECK (length(entry_hash) = 71 AND entry_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_prev_entry_hash_check;
  ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_prev_entry_hash_check CHECK (length(prev_entry_hash) = 71 AND prev_entry_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_request_hash_check;
  ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_request_hash_check CHECK (length(request_hash) = 71 AND request_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE mandate_hashes DROP CONSTRAINT mandate_hashes_hash_check;
  ALTER TABLE mandate_hashes ADD CONSTRAINT mandate_hashes_hash_check CHECK (length(hash) = 71 AND hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_jwt_hash_check;
  ALTER TABLE mandates ADD CONSTRAINT mandates_issuer_jwt_hash_check CHECK (length(issuer_jwt_hash) = 71 AND issuer_jwt_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE mandates DROP CONSTRAINT mandates_mandate_hash_check;
  ALTER TABLE mandates ADD CONSTRAINT mandates_mandate_hash_check CHECK (length(mandate_hash) = 71 AND mandate_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE reports DROP CONSTRAINT reports_evidence_hash_check;
  ALTER TABLE reports ADD CONSTRAINT reports_evidence_hash_check CHECK (length(evidence_hash) = 71 AND evidence_hash ~ '^sha256:[0-9a-f]+$');
  ALTER TABLE revocations DROP CONSTRAINT revocations_revocation_id_check;
  ALTER TABLE revocations ADD CONSTRAINT revocations_revocation_id_check CHECK (length(revocation_id) = 71 AND revocation_id ~ '^sha256:[0-9a-f]+$');
END $$;

-- Down Migration
DO $$ BEGIN
  ALTER TABLE ack_keys DROP CONSTRAINT ack_keys_thumbprint_check;
  ALTER TABLE ack_keys ADD CONSTRAINT ack_keys_thumbprint_check CHECK (writ_is_sha256(thumbprint));
  ALTER TABLE agents DROP CONSTRAINT agents_fingerprint_check;
  ALTER TABLE agents ADD CONSTRAINT agents_fingerprint_check CHECK (writ_is_sha256(fingerprint));
  ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_ledger_head_check;
  ALTER TABLE agreement_ledger_heads ADD CONSTRAINT agreement_ledger_heads_ledger_head_check CHECK (writ_is_sha256(ledger_head));
  ALTER TABLE approvals DROP CONSTRAINT approvals_request_hash_check;
  ALTER TABLE approvals ADD CONSTRAINT approvals_request_hash_check CHECK (writ_is_sha256(request_hash));
  ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_thumbprint_check;
  ALTER TABLE issuer_keys ADD CONSTRAINT issuer_keys_thumbprint_check CHECK (writ_is_sha256(thumbprint));
  ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_entry_hash_check;
  ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_entry_hash_check CHECK (writ_is_sha256(entry_hash));
  ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_prev_entry_hash_check;
  ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_prev_entry_hash_check CHECK (writ_is_sha256(prev_entry_hash));
  ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_request_hash_check;
  ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_request_hash_check CHECK (writ_is_sha256(request_hash));
  ALTER TABLE mandate_hashes DROP CONSTRAINT mandate_hashes_hash_check;
  ALTER TABLE mandate_hashes ADD CONSTRAINT mandate_hashes_hash_check CHECK (writ_is_sha256(hash));
  ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_jwt_hash_check;
  ALTER TABLE mandates ADD CONSTRAINT mandates_issuer_jwt_hash_check CHECK (writ_is_sha256(issuer_jwt_hash));
  ALTER TABLE mandates DROP CONSTRAINT mandates_mandate_hash_check;
  ALTER TABLE mandates ADD CONSTRAINT mandates_mandate_hash_check CHECK (writ_is_sha256(mandate_hash));
  ALTER TABLE reports DROP CONSTRAINT reports_evidence_hash_check;
  ALTER TABLE reports ADD CONSTRAINT reports_evidence_hash_check CHECK (writ_is_sha256(evidence_hash));
  ALTER TABLE revocations DROP CONSTRAINT revocations_revocation_id_check;
  ALTER TABLE revocations ADD CONSTRAINT revocations_revocation_id_check CHECK (writ_is_sha256(revocation_id));
END $$;
