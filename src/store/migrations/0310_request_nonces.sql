-- Up Migration
-- request_nonces: the nonces of agents' signed HTTP requests seen by POST
-- /v1/agents/verify-request (RFC 9421, Web Bot Auth; src/store/request-signatures.ts). One row per
-- (keyid, nonce): a second claim of the same pair while the row lives is a replay. A row lives
-- until its signature's expires plus the verifier's clock skew (keep_until); every claim deletes
-- a few rows past their keep_until, so the table holds about the signatures still alive. Shared
-- by every data-plane process through Postgres.
CREATE TABLE request_nonces (
  keyid      text        NOT NULL CHECK (length(keyid) BETWEEN 1 AND 128),
  nonce      text        NOT NULL CHECK (length(nonce) BETWEEN 1 AND 512),
  keep_until timestamptz NOT NULL,
  PRIMARY KEY (keyid, nonce)
);
CREATE INDEX request_nonces_keep_until_idx ON request_nonces (keep_until);

-- Down Migration
DROP TABLE request_nonces;
