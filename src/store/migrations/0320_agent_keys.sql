-- Up Migration
-- Keys of the per-agent tables (docs/scale.md, "Keys"): agent_id is the first column of every
-- primary and unique key of delegations, agreements, agreement_ledger_heads, ledger_entries,
-- agreement_spend and mandates, and the foreign keys between them carry it (an agreement's
-- agent is its delegation's; a ledger row's agent is its agreement's). The ledger tables gain
-- agent_id, filled from their agreements. A change of a record's agent (a re-declaration
-- naming another agent) moves its rows with it (ON UPDATE CASCADE). The ids stay unique across
-- agents here (delegations_delegation_id_key, agreements_agreement_id_key).
ALTER TABLE agreement_ledger_heads ADD COLUMN agent_id text;
UPDATE agreement_ledger_heads h SET agent_id = a.agent_id FROM agreements a WHERE a.agreement_id = h.agreement_id;
ALTER TABLE agreement_ledger_heads ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE ledger_entries ADD COLUMN agent_id text;
UPDATE ledger_entries e SET agent_id = a.agent_id FROM agreements a WHERE a.agreement_id = e.agreement_id;
ALTER TABLE ledger_entries ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE agreement_spend ADD COLUMN agent_id text;
UPDATE agreement_spend t SET agent_id = a.agent_id FROM agreements a WHERE a.agreement_id = t.agreement_id;
ALTER TABLE agreement_spend ALTER COLUMN agent_id SET NOT NULL;

ALTER TABLE agreements DROP CONSTRAINT agreements_delegation_id_fkey;
ALTER TABLE mandates DROP CONSTRAINT mandates_delegation_id_fkey;
ALTER TABLE mandates DROP CONSTRAINT mandates_agreement_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_agreement_id_fkey;
ALTER TABLE agreement_spend DROP CONSTRAINT agreement_spend_agreement_id_fkey;
ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_agreement_id_fkey;

ALTER TABLE delegations DROP CONSTRAINT delegations_pkey;
ALTER TABLE delegations ADD CONSTRAINT delegations_pkey PRIMARY KEY (agent_id, delegation_id);
CREATE UNIQUE INDEX delegations_delegation_id_key ON delegations (delegation_id);
DROP INDEX delegations_agent_id_idx;
ALTER TABLE agreements DROP CONSTRAINT agreements_pkey;
ALTER TABLE agreements ADD CONSTRAINT agreements_pkey PRIMARY KEY (agent_id, agreement_id);
CREATE UNIQUE INDEX agreements_agreement_id_key ON agreements (agreement_id);
DROP INDEX agreements_agent_id_idx;
DROP INDEX agreements_delegation_id_idx;
CREATE INDEX agreements_delegation_id_idx ON agreements (agent_id, delegation_id) WHERE delegation_id IS NOT NULL;
ALTER TABLE agreements ADD CONSTRAINT agreements_delegation_fkey FOREIGN KEY (agent_id, delegation_id)
  REFERENCES delegations (agent_id, delegation_id) ON UPDATE CASCADE;

ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_pkey;
ALTER TABLE agreement_ledger_heads ADD CONSTRAINT agreement_ledger_heads_pkey PRIMARY KEY (agent_id, agreement_id);
ALTER TABLE agreement_ledger_heads ADD CONSTRAINT agreement_ledger_heads_agreement_fkey FOREIGN KEY (agent_id, agreement_id)
  REFERENCES agreements (agent_id, agreement_id) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_action_outcome_key;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_pkey;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_pkey PRIMARY KEY (agent_id, agreement_id, sequence);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_action_outcome_key UNIQUE (agent_id, agreement_id, action_id, outcome);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_agreement_fkey FOREIGN KEY (agent_id, agreement_id)
  REFERENCES agreements (agent_id, agreement_id) ON UPDATE CASCADE;
ALTER TABLE agreement_spend DROP CONSTRAINT agreement_spend_pkey;
ALTER TABLE agreement_spend ADD CONSTRAINT agreement_spend_pkey PRIMARY KEY (agent_id, agreement_id, intent_id);
ALTER TABLE agreement_spend ADD CONSTRAINT agreement_spend_agreement_fkey FOREIGN KEY (agent_id, agreement_id)
  REFERENCES agreements (agent_id, agreement_id) ON UPDATE CASCADE;

ALTER TABLE mandates DROP CONSTRAINT mandates_pkey;
ALTER TABLE mandates ADD CONSTRAINT mandates_pkey PRIMARY KEY (agent_id, delegation_id);
ALTER TABLE mandates DROP CONSTRAINT mandates_agreement_id_key;
ALTER TABLE mandates ADD CONSTRAINT mandates_agreement_id_key UNIQUE (agent_id, agreement_id);
DROP INDEX mandates_agent_id_idx;
ALTER TABLE mandates ADD CONSTRAINT mandates_delegation_fkey FOREIGN KEY (agent_id, delegation_id)
  REFERENCES delegations (agent_id, delegation_id) ON UPDATE CASCADE;
ALTER TABLE mandates ADD CONSTRAINT mandates_agreement_fkey FOREIGN KEY (agent_id, agreement_id)
  REFERENCES agreements (agent_id, agreement_id) ON UPDATE CASCADE;

-- The spend transaction's read returns the agreement's agent (its new last column) and reads
-- every per-agent row by it: another result type, so the old function is dropped here; its
-- body is src/store/sql/functions/writ_spend_read.sql.
DROP FUNCTION IF EXISTS writ_spend_read(text[], text[], jsonb);

-- Down Migration
DROP FUNCTION IF EXISTS writ_spend_read(text[], text[], jsonb);
ALTER TABLE mandates DROP CONSTRAINT mandates_agreement_fkey;
ALTER TABLE mandates DROP CONSTRAINT mandates_delegation_fkey;
CREATE INDEX mandates_agent_id_idx ON mandates (agent_id);
ALTER TABLE mandates DROP CONSTRAINT mandates_agreement_id_key;
ALTER TABLE mandates ADD CONSTRAINT mandates_agreement_id_key UNIQUE (agreement_id);
ALTER TABLE mandates DROP CONSTRAINT mandates_pkey;
ALTER TABLE mandates ADD CONSTRAINT mandates_pkey PRIMARY KEY (delegation_id);
ALTER TABLE agreement_spend DROP CONSTRAINT agreement_spend_agreement_fkey;
ALTER TABLE agreement_spend DROP CONSTRAINT agreement_spend_pkey;
ALTER TABLE agreement_spend ADD CONSTRAINT agreement_spend_pkey PRIMARY KEY (agreement_id, intent_id);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_agreement_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_action_outcome_key;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_pkey;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_pkey PRIMARY KEY (agreement_id, sequence);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_action_outcome_key UNIQUE (agreement_id, action_id, outcome);
ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_agreement_fkey;
ALTER TABLE agreement_ledger_heads DROP CONSTRAINT agreement_ledger_heads_pkey;
ALTER TABLE agreement_ledger_heads ADD CONSTRAINT agreement_ledger_heads_pkey PRIMARY KEY (agreement_id);
ALTER TABLE agreements DROP CONSTRAINT agreements_delegation_fkey;
DROP INDEX agreements_delegation_id_idx;
CREATE INDEX agreements_delegation_id_idx ON agreements (delegation_id) WHERE delegation_id IS NOT NULL;
CREATE INDEX agreements_agent_id_idx ON agreements (agent_id);
DROP INDEX agreements_agreement_id_key;
ALTER TABLE agreements DROP CONSTRAINT agreements_pkey;
ALTER TABLE agreements ADD CONSTRAINT agreements_pkey PRIMARY KEY (agreement_id);
CREATE INDEX delegations_agent_id_idx ON delegations (agent_id);
DROP INDEX delegations_delegation_id_key;
ALTER TABLE delegations DROP CONSTRAINT delegations_pkey;
ALTER TABLE delegations ADD CONSTRAINT delegations_pkey PRIMARY KEY (delegation_id);
ALTER TABLE agreement_ledger_heads ADD CONSTRAINT agreement_ledger_heads_agreement_id_fkey FOREIGN KEY (agreement_id) REFERENCES agreements (agreement_id) ON DELETE CASCADE;
ALTER TABLE agreement_spend ADD CONSTRAINT agreement_spend_agreement_id_fkey FOREIGN KEY (agreement_id) REFERENCES agreements (agreement_id);
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_agreement_id_fkey FOREIGN KEY (agreement_id) REFERENCES agreements (agreement_id);
ALTER TABLE mandates ADD CONSTRAINT mandates_agreement_id_fkey FOREIGN KEY (agreement_id) REFERENCES agreements (agreement_id);
ALTER TABLE mandates ADD CONSTRAINT mandates_delegation_id_fkey FOREIGN KEY (delegation_id) REFERENCES delegations (delegation_id);
ALTER TABLE agreements ADD CONSTRAINT agreements_delegation_id_fkey FOREIGN KEY (delegation_id) REFERENCES delegations (delegation_id);
ALTER TABLE agreement_spend DROP COLUMN agent_id;
ALTER TABLE ledger_entries DROP COLUMN agent_id;
ALTER TABLE agreement_ledger_heads DROP COLUMN agent_id;
