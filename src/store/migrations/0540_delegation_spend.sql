-- Up Migration
-- The running total of each stored ancestor's descendants (docs/scale.md, "A delegation chain
-- across agents"; trust rule 5: a child's spend counts against every stored ancestor's
-- cumulative maximum, in the child's spend transaction).
-- delegation_spend: one row per ancestor (agent_id, delegation_id: its own key, so on a Citus
-- cluster the row is on the ancestor's shard, co-located with its delegation row) and currency:
-- the spend (minor units) of every agreement bound to a delegation whose stored chain names
-- it (chain_ids / chain_agents: the link's id with the ancestor's agent), its own agreements
-- excluded (those are read by its own agent, as for a delegation without descendants). A
-- delegation's subtree spend (writ_subtree_spend) is then its own agreements' totals plus
-- this row: both on its own shard, read under its own row lock.
-- Kept by writ_chain_spend_add (src/store/sql/functions/), in the transaction that changes an
-- agreement_spend total under a chain: a spend raises it (the spend transaction holds every
-- stored ancestor's row lock: src/store/ledger/spend.ts), a release lowers it
-- (src/store/ledger/holds.ts, releaseSpend), and an import, an agreement bound to another
-- delegation or a delegation whose stored chain changes move their totals
-- (src/store/chain-spend.ts). A total may go negative only through a bug: not checked, so a
-- release never fails on it.
CREATE TABLE delegation_spend (
  agent_id      text   NOT NULL,
  delegation_id text   NOT NULL,
  currency      text   NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  spent_minor   bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, delegation_id, currency)
);

-- Backfill: every stored link of every stored chain, with the spend of the agreements bound to
-- the delegation that stores the chain.
INSERT INTO delegation_spend (agent_id, delegation_id, currency, spent_minor)
SELECT u.ag, u.id, t.currency, sum(t.spent_minor)::bigint
FROM delegations c
CROSS JOIN LATERAL unnest(c.chain_agents, c.chain_ids) AS u(ag, id)
JOIN agreements b ON b.agent_id = c.agent_id AND b.delegation_id = c.delegation_id
JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
WHERE u.ag IS NOT NULL AND cardinality(c.chain_ids) > 0
GROUP BY u.ag, u.id, t.currency;

-- Down Migration
DROP TABLE delegation_spend;
