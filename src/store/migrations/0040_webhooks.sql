-- Up Migration
-- The webhook outbox (see src/webhooks/outbox.ts): one row per (subscription, event), written by
-- enqueueAlert inside the transaction that made the change, so an alert exists iff the change
-- committed. No foreign key: subscriptions belong to the registry and a delivery outlives them.
--
-- payload is the alert WITHOUT its signature (the worker signs at send time with the log key);
-- webhook_url is the URL as it was at enqueue time (the only one ever used).
-- next_attempt_at: when the row is next due; NULL once it is delivered or has failed for good.
-- attempts counts delivery attempts started (it is incremented when a worker claims the row).
CREATE TABLE webhook_outbox (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id text        NOT NULL,
  webhook_url     text        NOT NULL,
  event_id        text        NOT NULL,
  payload         jsonb       NOT NULL,
  attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz DEFAULT now(),
  delivered_at    timestamptz,
  failed_at       timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, event_id),
  CHECK (delivered_at IS NULL OR failed_at IS NULL),
  CHECK ((next_attempt_at IS NULL) = (delivered_at IS NOT NULL OR failed_at IS NOT NULL))
);
-- The worker's poll: due rows in due order. Finished rows are not in the index.
CREATE INDEX webhook_outbox_due_idx ON webhook_outbox (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

-- Down Migration
DROP TABLE webhook_outbox;
