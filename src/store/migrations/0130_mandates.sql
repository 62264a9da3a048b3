-- Up Migration
-- AP2 open payment mandates recorded as delegation evidence (docs/mandates.md;
-- src/store/{issuer-keys,mandates}.ts).
--
-- issuer_keys: public keys that wallet organizations register as trusted to issue mandates.
-- kid is what an issuer JWT header names to select the key: the JWK's own kid when it was
-- registered with one, else its RFC 7638 id (sha256:...). A key is never deleted; revoking it
-- refuses new mandates signed with it (mandates recorded before stay in force until revoked).
CREATE TABLE issuer_keys (
  kid        text        PRIMARY KEY CHECK (length(kid) BETWEEN 1 AND 256),
  thumbprint text        NOT NULL UNIQUE CHECK (thumbprint ~ '^sha256:[0-9a-f]{64}$'),
  org_id     text        NOT NULL REFERENCES orgs (org_id),
  public_key jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX issuer_keys_org_id_idx ON issuer_keys (org_id, created_at);

-- agreements.evidence: set on the agreement row that holds the spend ledger of a recorded
-- mandate. Its record is written by the service (no principal signature: the verified SD-JWT
-- in mandates is the authority), and verify evaluates the action against the delegation alone.
ALTER TABLE agreements ADD COLUMN evidence text CHECK (evidence IN ('ap2_open_payment_mandate'));

-- mandates: one row per recorded mandate: the delegation it became, the agreement row holding
-- its ledger (same id), who presented it for which agent, the issuer key, and the presentation.
CREATE TABLE mandates (
  delegation_id   text        PRIMARY KEY REFERENCES delegations (delegation_id),
  agreement_id    text        NOT NULL UNIQUE REFERENCES agreements (agreement_id),
  agent_id        text        NOT NULL,
  org_id          text        NOT NULL,
  issuer_kid      text        NOT NULL REFERENCES issuer_keys (kid),
  issuer_org_id   text        NOT NULL,
  issuer_jwt_hash text        NOT NULL UNIQUE CHECK (issuer_jwt_hash ~ '^sha256:[0-9a-f]{64}$'),
  sd_jwt          text        NOT NULL,
  claims          jsonb       NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mandates_agent_id_idx ON mandates (agent_id);

-- Down Migration
DROP TABLE mandates;
ALTER TABLE agreements DROP COLUMN evidence;
DROP TABLE issuer_keys;
