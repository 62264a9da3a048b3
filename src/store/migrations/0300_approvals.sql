-- Up Migration
-- approvals: a STEP_UP the principal can clear (src/store/approvals.ts, docs/reference/approvals.md).
-- One approval per (agent, action): bound to the exact request hash of that action; pending until
-- the principal approves or declines it (once), expired after expires_at; used_at is set when the
-- approved request's retry was ALLOWed (an approval is used once).
CREATE TABLE approvals (
  approval_id      text        PRIMARY KEY CHECK (length(approval_id) BETWEEN 1 AND 64),
  agent_id         text        NOT NULL,
  action_id        text        NOT NULL,
  org_id           text        NOT NULL,
  principal_id     text        NOT NULL,
  agreement_id     text        NOT NULL,
  request_hash     text        NOT NULL CHECK (writ_is_sha256(request_hash)),
  content          jsonb       NOT NULL,
  principal_keys   jsonb       NOT NULL DEFAULT '[]'::jsonb,
  status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'declined')),
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  decided_with     jsonb,
  used_at          timestamptz,
  UNIQUE (agent_id, action_id)
);
CREATE INDEX approvals_principal_pending_idx ON approvals (principal_id, created_at DESC) WHERE status = 'pending';

-- principal_passkeys: WebAuthn credentials a principal registered in the portal.
CREATE TABLE principal_passkeys (
  credential_id text        PRIMARY KEY CHECK (length(credential_id) BETWEEN 1 AND 1400),
  principal_id  text        NOT NULL,
  public_key    bytea       NOT NULL,
  counter       bigint      NOT NULL DEFAULT 0,
  transports    text[]      NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX principal_passkeys_principal_idx ON principal_passkeys (principal_id);

-- Down Migration
DROP TABLE principal_passkeys;
DROP TABLE approvals;
