-- Up Migration
-- Holds, captures, voids, expiries and refunds (src/core/agreement/holds.ts, docs/verify.md
-- "Holds, captures and refunds"):
-- - ledger_entries.outcome takes the hold steps: captured, released, voided, expired, refunded.
-- - ledger_entries.step_key: the payment side's idempotency key of a capture or refund (and of
--   the release that follows it); '' on every other entry. An (action, outcome, step_key)
--   triple occurs at most once per agreement: several captures of one action, each once. The
--   unique constraint keeps its name and its leading columns (agent_id, agreement_id,
--   action_id: 0320_agent_keys.sql), so a lookup of an action's entries is the same index
--   range scan as before.
-- - ledger_open_holds: the allowed actions whose hold is still open (not settled, failed,
--   captured in full, voided nor expired), with when they were allowed, kept by a trigger on
--   ledger_entries; the expiry sweep (WRIT_HOLD_EXPIRY_SECONDS, src/store/ledger/holds.ts)
--   reads its oldest rows instead of the whole ledger. Imported entries hold nothing. Keyed
--   by the entry's agent first, as the other per-agent tables (docs/scale.md, "Keys").
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_outcome_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_outcome_check
  CHECK (outcome IN ('allowed', 'authorized', 'settled', 'failed', 'captured', 'released', 'voided', 'expired', 'refunded'));
ALTER TABLE ledger_entries ADD COLUMN step_key text NOT NULL DEFAULT '' CHECK (length(step_key) <= 300);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_action_outcome_key,
  ADD CONSTRAINT ledger_entries_action_outcome_key UNIQUE (agent_id, agreement_id, action_id, outcome, step_key);

CREATE TABLE ledger_open_holds (
  agent_id     text        NOT NULL,
  agreement_id text        NOT NULL,
  action_id    text        NOT NULL,
  held_at      timestamptz NOT NULL,
  PRIMARY KEY (agent_id, agreement_id, action_id)
);
CREATE INDEX ledger_open_holds_held_at_idx ON ledger_open_holds (held_at);

INSERT INTO ledger_open_holds (agent_id, agreement_id, action_id, held_at)
SELECT e.agent_id, e.agreement_id, e.action_id, e.created_at FROM ledger_entries e
WHERE e.outcome = 'allowed' AND NOT e.imported
  AND NOT EXISTS (SELECT 1 FROM ledger_entries f WHERE f.agent_id = e.agent_id AND f.agreement_id = e.agreement_id AND f.action_id = e.action_id AND f.outcome IN ('settled', 'failed'));

CREATE FUNCTION writ_ledger_open_holds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_open_holds (agent_id, agreement_id, action_id, held_at)
  SELECT n.agent_id, n.agreement_id, n.action_id, n.created_at FROM new_rows n WHERE n.outcome = 'allowed' AND NOT n.imported
  ON CONFLICT DO NOTHING;
  DELETE FROM ledger_open_holds h USING new_rows n
  WHERE h.agent_id = n.agent_id AND h.agreement_id = n.agreement_id AND h.action_id = n.action_id
    AND (n.outcome IN ('settled', 'failed', 'voided', 'expired') OR (n.outcome = 'captured' AND n.entry ? 'final'));
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_entries_open_holds AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION writ_ledger_open_holds();

-- Down Migration
DROP TRIGGER ledger_entries_open_holds ON ledger_entries;
DROP FUNCTION writ_ledger_open_holds();
DROP TABLE ledger_open_holds;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_action_outcome_key,
  ADD CONSTRAINT ledger_entries_action_outcome_key UNIQUE (agent_id, agreement_id, action_id, outcome);
ALTER TABLE ledger_entries DROP COLUMN step_key;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_outcome_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_outcome_check CHECK (outcome IN ('allowed', 'authorized', 'settled', 'failed'));
