-- Up Migration
-- Triggers a Citus shard can run (docs/scale.md, "Writ on a Citus cluster"): a trigger of a
-- distributed table fires on the worker holding the row's shard, where it may touch only its
-- own row (a statement reading or writing another distributed table from a shard is refused:
-- "cannot execute a distributed query from a query on a shard"). So:
-- - ledger_open_holds is no longer kept by a statement trigger of ledger_entries (which read
--   its transition table and wrote another table); the store keeps it in the statement that
--   writes the entry, in the same transaction (sql/functions/writ_spend_write.sql: an allowed
--   entry opens a hold; src/store/ledger/open-holds.ts: a closing step closes it).
-- - The delegations' trigger (sql/functions/writ_delegations_changed.sql) notifies its own
--   row's agent only: every agreement bound to a delegation is the delegation's agent's (the
--   foreign key (agent_id, delegation_id) of 0320_agent_keys.sql), so the look-up of the
--   agreements' agents it made named no other agent.
DROP TRIGGER ledger_entries_open_holds ON ledger_entries;
DROP FUNCTION writ_ledger_open_holds();

-- Down Migration
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
