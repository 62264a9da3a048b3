-- Up Migration
-- Limits per period (src/core/money/periods.ts; docs/how-to/limit-spend-per-period.md): what
-- the spend transaction (src/store/ledger/spend.ts) counts per window, additive to the ledger.
-- Both tables are keyed by agent_id first, as the other per-agent tables (docs/scale.md,
-- "Keys"): the agreement's agent, which is its delegation's. An agreement or delegation id
-- alone never identifies a row.
-- - period_spend: one counter per owner (a mandate's intent, ["intent", agent_id,
--   agreement_id, intent_id], or a delegation, ["delegation", agent_id, delegation_id], as
--   JSON text), currency, window kind ("day@Europe/Berlin", "month@UTC", "total") and window
--   start: the spend (minor units) and the number of payments counted in it. Written under the owner's row lock (the
--   agreement's or the delegation's), so a window is read and raised atomically with the
--   other budgets.
-- - period_events: one row per allowed action and owner with period limits: its instant (the
--   service's decision time), amount and the calendar windows it was counted in. Rolling
--   windows are sums over these rows in (t - D, t] (an index range bounded by the window, never
--   the whole ledger); a release (the `failed` outcome, writ_period_release) marks the row
--   released and takes its amount and payment out of exactly those windows.
CREATE TABLE period_spend (
  agent_id     text        NOT NULL,
  owner        text        NOT NULL CHECK (length(owner) BETWEEN 1 AND 1024),
  currency     text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  window_kind  text        NOT NULL CHECK (length(window_kind) BETWEEN 1 AND 128),
  window_start timestamptz NOT NULL,
  spent_minor  bigint      NOT NULL DEFAULT 0 CHECK (spent_minor >= 0),
  payments     integer     NOT NULL DEFAULT 0 CHECK (payments >= 0),
  PRIMARY KEY (agent_id, owner, currency, window_kind, window_start)
);

CREATE TABLE period_events (
  agent_id     text        NOT NULL,
  agreement_id text        NOT NULL,
  action_id    text        NOT NULL,
  owner        text        NOT NULL CHECK (length(owner) BETWEEN 1 AND 1024),
  currency     text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  at           timestamptz NOT NULL,
  amount_minor bigint      NOT NULL CHECK (amount_minor >= 0),
  allowed_minor bigint     NOT NULL CHECK (allowed_minor >= 0),
  windows      jsonb       NOT NULL DEFAULT '[]'::jsonb,
  released     boolean     NOT NULL DEFAULT false,
  PRIMARY KEY (agent_id, agreement_id, action_id, owner)
);
CREATE INDEX period_events_window ON period_events (agent_id, owner, currency, at) WHERE NOT released;

-- Down Migration
DROP FUNCTION IF EXISTS writ_period_read(jsonb);
DROP FUNCTION IF EXISTS writ_period_write(jsonb);
DROP FUNCTION IF EXISTS writ_period_release(text, text, text, bigint, bigint);
DROP TABLE period_events;
DROP TABLE period_spend;
