-- Up Migration
-- Sub-delegation budgets are the stored parent's (docs/threat-model/chains.md, src/store/ledger/spend.ts):
-- a child's spend counts against every ancestor's cumulative maximum, checked in the spend
-- transaction that writes the child's ledger entry.
--
-- delegations.has_descendants: true once a delegation is named in a stored chain (set by
-- src/store/delegations.ts, `upsertDelegation`, on every ancestor of a child it stores; never
-- unset). A delegation's cumulative total is then the spend of its whole subtree (its own
-- agreements and those of every delegation whose chain names it); without descendants it
-- stays the spend of its own agreements, read exactly as before.
ALTER TABLE delegations ADD COLUMN has_descendants boolean NOT NULL DEFAULT false;
UPDATE delegations p SET has_descendants = true
WHERE EXISTS (SELECT 1 FROM delegations c WHERE c.chain_ids @> ARRAY[p.delegation_id]);

-- The spend of delegation p_delegation's subtree (itself and every delegation whose chain
-- names it) in p_currency, and whether any of it is in another currency.
CREATE FUNCTION writ_subtree_spend(p_delegation text, p_currency text)
RETURNS TABLE (spent numeric, mixed boolean) LANGUAGE sql STABLE AS $$
  SELECT sum(t.spent_minor) FILTER (WHERE t.currency = p_currency), bool_or(t.currency <> p_currency AND t.spent_minor > 0)
  FROM (SELECT p_delegation AS delegation_id UNION ALL SELECT c.delegation_id FROM delegations c WHERE c.chain_ids @> ARRAY[p_delegation]) x
  JOIN agreements b ON b.delegation_id = x.delegation_id
  JOIN agreement_spend t ON t.agreement_id = b.agreement_id
$$;

-- writ_spend_read of 0210_ledger_request_hash.sql, with the stored chain:
-- - Locks: the delegation rows of p_delegations in the order (depth, id), depth the length of
--   the row's chain: ancestors before their descendants (root first, the child last), one
--   order for every transaction, so no two spend batches deadlock (src/store/ledger/index.ts).
-- - A spend's delegation total (dcur) is its subtree's when the delegation has descendants.
-- - Two more columns: delegation_chain, the chain_ids of the agreement's delegation (null:
--   no delegation), and, when it has a chain, ancestors: one object per STORED ancestor, root
--   first: {id, currency, cumulative (the scope's cumulative_maximum as stored, or null),
--   revoked, spent (its subtree's spend in its currency, decimal text), mixed}. They are
--   locked only when the caller put them in p_delegations: it refuses a spend under a chain
--   with a stored link that did not (src/store/ledger/spend.ts).
-- A spend without a delegation chain reads what it read before (one probe of its delegation's
-- row, as before).
DROP FUNCTION writ_spend_read(text[], text[], jsonb);
CREATE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spent text, delegation_mixed boolean, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM delegations d WHERE d.delegation_id = ANY (p_delegations) ORDER BY cardinality(d.chain_ids), d.delegation_id FOR NO KEY UPDATE;
  PERFORM 1 FROM agreements a WHERE a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
  RETURN QUERY
  SELECT s.i, a.agreement_id IS NOT NULL, CASE WHEN a.agreement_id IS NULL THEN NULL ELSE coalesce(h.ledger_sequence, 0) END, h.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
    CASE WHEN s.rev IS NOT NULL AND a.revision = s.rev THEN s.currency
      ELSE (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) END,
    coalesce(dd.revoked, false),
    coalesce((SELECT true FROM revocations r WHERE r.agreement_id = s.agreement_id LIMIT 1), false),
    coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    coalesce(dt.spent, ds.spent, 0)::text,
    coalesce(dt.mixed, ds.mixed, false),
    le.entry,
    coalesce(le.released, false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id), false)),
    le.request_hash,
    coalesce(le.imported, false),
    dd.chain_ids,
    CASE WHEN cardinality(dd.chain_ids) > 0 THEN
      (SELECT jsonb_agg(jsonb_build_object('id', p.delegation_id, 'currency', p.record->'scope'->>'currency', 'cumulative', p.record->'scope'->'cumulative_maximum',
                                           'revoked', p.revoked_at IS NOT NULL, 'spent', coalesce(st.spent, 0)::text, 'mixed', coalesce(st.mixed, false))
                        ORDER BY cardinality(p.chain_ids))
       FROM delegations p
       LEFT JOIN LATERAL (SELECT w.spent, w.mixed FROM writ_subtree_spend(p.delegation_id, p.record->'scope'->>'currency') w
                          WHERE (p.record->'scope'->'cumulative_maximum') IS NOT NULL) st ON true
       WHERE p.delegation_id = ANY (dd.chain_ids))
    END
  FROM jsonb_to_recordset(p_spends) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text, rev bigint)
  LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agreement_id = s.agreement_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM agreement_ledger_heads y WHERE y.agreement_id = s.agreement_id LIMIT 1) h ON true
  -- The agreement's delegation: one probe (as before), now also its chain and whether it has descendants.
  LEFT JOIN LATERAL (SELECT z.revoked_at IS NOT NULL AS revoked, z.chain_ids, z.has_descendants FROM delegations z WHERE z.delegation_id = a.delegation_id LIMIT 1) dd ON true
  -- The delegation's spend in its currency and whether any is in another: its own agreements'
  -- totals (no descendants), or its subtree's.
  LEFT JOIN LATERAL (SELECT sum(t.spent_minor) FILTER (WHERE t.currency = s.dcur) AS spent, bool_or(t.currency <> s.dcur AND t.spent_minor > 0) AS mixed
                     FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE s.dcur IS NOT NULL AND NOT coalesce(dd.has_descendants, false) AND b.delegation_id = a.delegation_id) ds ON true
  LEFT JOIN LATERAL (SELECT w.spent, w.mixed FROM writ_subtree_spend(a.delegation_id, s.dcur) w
                     WHERE s.dcur IS NOT NULL AND coalesce(dd.has_descendants, false)) dt ON true
  -- The action's entries (an index range scan of ledger_entries_action_outcome_key; none for a new action).
  LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                            (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                            bool_or(e.outcome = 'failed') AS released, bool_or(e.imported) AS imported
                     FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
  ORDER BY s.i;
END $$;

-- Down Migration
DROP FUNCTION writ_spend_read(text[], text[], jsonb);
CREATE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spent text, delegation_mixed boolean, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM delegations d WHERE d.delegation_id = ANY (p_delegations) ORDER BY d.delegation_id FOR NO KEY UPDATE;
  PERFORM 1 FROM agreements a WHERE a.agreement_id = ANY (p_agreements) ORDER BY a.agreement_id FOR NO KEY UPDATE;
  -- Every lookup is a scalar subquery (an index probe per spend): an EXISTS could be planned
  -- as a hashed subplan that reads a whole table (verify_decisions, ledger_entries) per batch;
  -- no sequential scans either, whatever the statistics were when the plan was made.
  RETURN QUERY
  SELECT s.i, a.agreement_id IS NOT NULL, CASE WHEN a.agreement_id IS NULL THEN NULL ELSE coalesce(h.ledger_sequence, 0) END, h.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
    -- The spend's currency IS its intent's in the revision it was decided on (s.rev): while
    -- that revision is stored, the signed record (about 2 kB, compressed) is not read.
    CASE WHEN s.rev IS NOT NULL AND a.revision = s.rev THEN s.currency
      ELSE (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) END,
    coalesce((SELECT d.revoked_at IS NOT NULL FROM delegations d WHERE d.delegation_id = a.delegation_id), false),
    coalesce((SELECT true FROM revocations r WHERE r.agreement_id = s.agreement_id LIMIT 1), false),
    coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    coalesce(ds.spent, 0)::text,
    coalesce(ds.mixed, false),
    le.entry,
    coalesce(le.released, false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id), false)),
    le.request_hash,
    coalesce(le.imported, false)
  FROM jsonb_to_recordset(p_spends) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text, rev bigint)
  -- LIMIT keeps the lookup a per-spend index probe (a generic plan may otherwise hash-join a seq scan of agreements).
  LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agreement_id = s.agreement_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM agreement_ledger_heads y WHERE y.agreement_id = s.agreement_id LIMIT 1) h ON true
  -- The delegation's spend in its currency and whether any is in another, in one scan of its
  -- agreements' totals (none without a delegation budget).
  LEFT JOIN LATERAL (SELECT sum(t.spent_minor) FILTER (WHERE t.currency = s.dcur) AS spent, bool_or(t.currency <> s.dcur AND t.spent_minor > 0) AS mixed
                     FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE s.dcur IS NOT NULL AND b.delegation_id = a.delegation_id) ds ON true
  -- The action's entries (an index range scan of ledger_entries_action_outcome_key; none for a new action).
  LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                            (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                            bool_or(e.outcome = 'failed') AS released, bool_or(e.imported) AS imported
                     FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
  ORDER BY s.i;
END $$;
DROP FUNCTION writ_subtree_spend(text, text);
ALTER TABLE delegations DROP COLUMN has_descendants;
