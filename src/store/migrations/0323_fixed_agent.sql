-- Up Migration
-- A stored record's agent never changes (src/store/delegations.ts, agreements.ts refuse a
-- re-declaration naming another agent): the foreign keys between the per-agent tables no
-- longer cascade an update of agent_id (0320_agent_keys.sql). Citus refuses ON UPDATE CASCADE
-- on a foreign key holding the distribution column, and never updates that column.
ALTER TABLE agreements DROP CONSTRAINT agreements_delegation_fkey,
  ADD CONSTRAINT agreements_delegation_fkey FOREIGN KEY (agent_id, delegation_id) REFERENCES delegations (agent_id, delegation_id);
ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_agreement_fkey,
  ADD CONSTRAINT agreement_ledger_heads_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id) ON DELETE CASCADE;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_agreement_fkey,
  ADD CONSTRAINT ledger_entries_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id);
ALTER TABLE agreement_spend DROP CONSTRAINT agreement_spend_agreement_fkey,
  ADD CONSTRAINT agreement_spend_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id);
ALTER TABLE mandates DROP CONSTRAINT mandates_delegation_fkey, DROP CONSTRAINT mandates_agreement_fkey,
  ADD CONSTRAINT mandates_delegation_fkey FOREIGN KEY (agent_id, delegation_id) REFERENCES delegations (agent_id, delegation_id),
  ADD CONSTRAINT mandates_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id);

-- Down Migration
ALTER TABLE agreements DROP CONSTRAINT agreements_delegation_fkey,
  ADD CONSTRAINT agreements_delegation_fkey FOREIGN KEY (agent_id, delegation_id) REFERENCES delegations (agent_id, delegation_id) ON UPDATE CASCADE;
ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_agreement_fkey,
  ADD CONSTRAINT agreement_ledger_heads_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_agreement_fkey,
  ADD CONSTRAINT ledger_entries_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id) ON UPDATE CASCADE;
ALTER TABLE agreement_spend DROP CONSTRAINT agreement_spend_agreement_fkey,
  ADD CONSTRAINT agreement_spend_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id) ON UPDATE CASCADE;
ALTER TABLE mandates DROP CONSTRAINT mandates_delegation_fkey, DROP CONSTRAINT mandates_agreement_fkey,
  ADD CONSTRAINT mandates_delegation_fkey FOREIGN KEY (agent_id, delegation_id) REFERENCES delegations (agent_id, delegation_id) ON UPDATE CASCADE,
  ADD CONSTRAINT mandates_agreement_fkey FOREIGN KEY (agent_id, agreement_id) REFERENCES agreements (agent_id, agreement_id) ON UPDATE CASCADE;
