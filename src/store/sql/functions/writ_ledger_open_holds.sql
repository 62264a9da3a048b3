-- Statement trigger of ledger_entries (migrations/0400_holds.sql): keeps ledger_open_holds, the
-- allowed actions whose hold is still open, for the expiry sweep (src/store/ledger/holds.ts). An
-- allowed entry (not imported) opens a hold; settled, failed, voided, expired or a final capture
-- closes it. Its rows are keyed by the entry's agent (agent_id first, docs/scale.md "Keys").
CREATE OR REPLACE FUNCTION writ_ledger_open_holds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_open_holds (agent_id, agreement_id, action_id, held_at)
  SELECT n.agent_id, n.agreement_id, n.action_id, n.created_at FROM new_rows n WHERE n.outcome = 'allowed' AND NOT n.imported
  ON CONFLICT DO NOTHING;
  DELETE FROM ledger_open_holds h USING new_rows n
  WHERE h.agent_id = n.agent_id AND h.agreement_id = n.agreement_id AND h.action_id = n.action_id
    AND (n.outcome IN ('settled', 'failed', 'voided', 'expired') OR (n.outcome = 'captured' AND n.entry ? 'final'));
  RETURN NULL;
END $$;
