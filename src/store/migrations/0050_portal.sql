-- Up Migration
-- Portal sign-in (see src/store/portal.ts, docs/portal.md): principals known by e-mail, single-use
-- sign-in tokens from magic links, and sessions. Tokens are stored only as SHA-256 (32 bytes).

-- A principal of the portal: a pseudonymous id (prn_...) and the e-mail it signs in with
-- (trimmed, lower-case). The e-mail never leaves the service except to its own session.
CREATE TABLE portal_principals (
  principal_id text        PRIMARY KEY CHECK (principal_id ~ '^prn_[A-Za-z0-9_-]{1,64}$'),
  email        text        NOT NULL UNIQUE CHECK (length(email) BETWEEN 3 AND 254 AND email = lower(email)),
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- Sign-in tokens: single use (used_at is set by the one exchange that wins).
CREATE TABLE portal_sign_in_tokens (
  token_hash   bytea       PRIMARY KEY CHECK (length(token_hash) = 32),
  principal_id text        NOT NULL REFERENCES portal_principals (principal_id),
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_sign_in_tokens_expires_idx ON portal_sign_in_tokens (expires_at);

-- Sessions: valid while expires_at is in the future and revoked_at is NULL (sign-out sets it).
CREATE TABLE portal_sessions (
  session_hash bytea       PRIMARY KEY CHECK (length(session_hash) = 32),
  principal_id text        NOT NULL REFERENCES portal_principals (principal_id),
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_sessions_principal_idx ON portal_sessions (principal_id);

-- Down Migration
DROP TABLE portal_sessions;
DROP TABLE portal_sign_in_tokens;
DROP TABLE portal_principals;
