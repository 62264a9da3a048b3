-- Up Migration
-- ack_keys: the public keys a payment-side organization registers to sign acknowledgements
-- (src/store/ack-keys.ts, POST /v1/orgs/{org_id}/ack-keys). An acknowledgement names a registry
-- organization (its `id` is an org_id) only when it is signed by a live key of that
-- organization held here (src/store/ack-parties.ts). Keys are scoped per organization: two
-- organizations may register the same public key (neither gains anything: an acknowledgement
-- names its organization inside what is signed). A key is never deleted; revoking it is final.
CREATE TABLE ack_keys (
  org_id     text        NOT NULL REFERENCES orgs (org_id),
  thumbprint text        NOT NULL CHECK (writ_is_sha256(thumbprint)),
  public_key jsonb       NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (org_id, thumbprint)
);

-- Down Migration
DROP TABLE ack_keys;
