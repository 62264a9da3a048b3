-- Up Migration
-- A recorded mandate's identity is what its issuer signed (docs/mandates.md): mandate_hash is
-- 'sha256:' + hex SHA-256 of the issuer JWT's signing input `<header>.<payload>` (the
-- presentation's first part up to its last '.'), never of the signature's text, which had
-- several spellings that verify (spare base64url bits, the ES256 high-S twin) and so let one
-- mandate be recorded, and spent, several times. issuer_jwt_hash stays what it was (the hash of
-- the issuer JWT as presented), recorded but no longer an identity.
--
-- Rows recorded before this migration get their mandate_hash from their stored presentation.
-- Where one mandate was recorded more than once (the first recording by recorded_at keeps the
-- hash), the later rows keep mandate_hash NULL: they are the duplicates the old identity let
-- in, listed by `SELECT delegation_id FROM mandates WHERE mandate_hash IS NULL`, and left as
-- they are (revoke them with DELETE /svc/delegations/{id}). Every row written from now on
-- carries its hash (src/store/mandates.ts), unique.
ALTER TABLE mandates ADD COLUMN mandate_hash text CONSTRAINT mandates_mandate_hash_check CHECK (writ_is_sha256(mandate_hash));
WITH hashed AS (
  SELECT delegation_id, recorded_at,
         'sha256:' || encode(sha256(convert_to(regexp_replace(split_part(sd_jwt, '~', 1), '\.[^.]*$', ''), 'UTF8')), 'hex') AS h
  FROM mandates
), ranked AS (
  SELECT delegation_id, h, row_number() OVER (PARTITION BY h ORDER BY recorded_at, delegation_id) AS n FROM hashed
)
UPDATE mandates m SET mandate_hash = r.h FROM ranked r WHERE r.delegation_id = m.delegation_id AND r.n = 1;
CREATE UNIQUE INDEX mandates_mandate_hash_key ON mandates (mandate_hash);

-- Down Migration
DROP INDEX mandates_mandate_hash_key;
ALTER TABLE mandates DROP COLUMN mandate_hash;
