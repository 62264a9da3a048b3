-- Up Migration
-- Alert fan-outs (src/store/alert-fanout.ts): ONE row per alert of an agent, written in the
-- transaction that made the change (a report), whatever the number of subscribers; expanded
-- into webhook_outbox rows (one per active subscription) after that transaction commits, by
-- the writer at once and by any delivery worker as the recovery path. A row lives only until
-- it is expanded; expansion deletes it in the same transaction that writes the outbox rows.
CREATE TABLE alert_fanout (
  id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id   text        NOT NULL,
  alert      jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE alert_fanout;
