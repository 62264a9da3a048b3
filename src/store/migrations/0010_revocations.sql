-- Up Migration
-- The revocation feed: principal revocations received over POST /v1/revocations/push.
-- sequence is gapless and assigned in commit order under an advisory lock (see
-- src/store/revocations.ts), so a follower that resumes with ?after=<sequence> misses nothing.
CREATE TABLE revocations (
  sequence      bigint      PRIMARY KEY CHECK (sequence >= 1),
  revocation_id text        NOT NULL UNIQUE CHECK (revocation_id ~ '^sha256:[0-9a-f]{64}$'),
  agreement_id  text        NOT NULL,
  mandate_hash  text        NOT NULL,
  revocation    jsonb       NOT NULL,
  pushed_at     text        NOT NULL,
  received_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revocations_agreement_id_idx ON revocations (agreement_id);

-- Down Migration
DROP TABLE revocations;
