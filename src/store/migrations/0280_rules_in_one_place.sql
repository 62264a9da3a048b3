-- Up Migration
-- 1. verify_decisions.burst_exempt: a stored decision that DENIED_ATTEMPT_BURST does not count
--    (a refusal of the spend transaction, a DENY that did not try what the grant forbids, any
--    answer that is not a DENY; src/verify/pipeline/decide.ts), as a column. It rode inside the
--    stored answer as the member `burst_exempt`, which is moved here and removed from it.
--    The burst rule's index (0190_denial_index.sql) holds the DENYs that count, by the column.
ALTER TABLE verify_decisions ADD COLUMN burst_exempt boolean NOT NULL DEFAULT false;
UPDATE verify_decisions SET burst_exempt = true, decision = decision - 'burst_exempt' WHERE decision ? 'burst_exempt';
DROP INDEX verify_decisions_agent_recent;
CREATE INDEX verify_decisions_agent_recent ON verify_decisions (agent_id, created_at)
  WHERE decision->>'verdict' = 'DENY' AND NOT burst_exempt;

-- 2. The spend transaction's read returns spend by currency and decides nothing (the budget
--    rule, mixed currencies included, is src/core/money/budget.ts): writ_spend_read and
--    writ_subtree_spend change their results, so their old versions are dropped here. Their
--    current bodies, like every function's, are src/store/sql/functions/<name>.sql, applied
--    after the migrations (src/store/migrate.ts).
DROP FUNCTION writ_spend_read(text[], text[], jsonb);
DROP FUNCTION writ_subtree_spend(text, text);

-- Down Migration
-- The functions as 0240_chain_budgets.sql left them (its Up section).
DROP FUNCTION IF EXISTS writ_spend_read(text[], text[], jsonb);
DROP FUNCTION IF EXISTS writ_subtree_spend(text);
CREATE FUNCTION writ_subtree_spend(p_delegation text, p_currency text)
RETURNS TABLE (spent numeric, mixed boolean) LANGUAGE sql STABLE AS $$
  SELECT sum(t.spent_minor) FILTER (WHERE t.currency = p_currency), bool_or(t.currency <> p_currency AND t.spent_minor > 0)
  FROM (SELECT p_delegation AS delegation_id UNION ALL SELECT c.delegation_id FROM delegations c WHERE c.chain_ids @> ARRAY[p_delegation]) x
  JOIN agreements b ON b.delegation_id = x.delegation_id
  JOIN agreement_spend t ON t.agreement_id = b.agreement_id
$$;

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
  LEFT JOIN LATERAL (SELECT z.revoked_at IS NOT NULL AS revoked, z.chain_ids, z.has_descendants FROM delegations z WHERE z.delegation_id = a.delegation_id LIMIT 1) dd ON true
  LEFT JOIN LATERAL (SELECT sum(t.spent_minor) FILTER (WHERE t.currency = s.dcur) AS spent, bool_or(t.currency <> s.dcur AND t.spent_minor > 0) AS mixed
                     FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE s.dcur IS NOT NULL AND NOT coalesce(dd.has_descendants, false) AND b.delegation_id = a.delegation_id) ds ON true
  LEFT JOIN LATERAL (SELECT w.spent, w.mixed FROM writ_subtree_spend(a.delegation_id, s.dcur) w
                     WHERE s.dcur IS NOT NULL AND coalesce(dd.has_descendants, false)) dt ON true
  LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                            (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                            bool_or(e.outcome = 'failed') AS released, bool_or(e.imported) AS imported
                     FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
  ORDER BY s.i;
END $$;

DROP INDEX verify_decisions_agent_recent;
UPDATE verify_decisions SET decision = decision || '{"burst_exempt": true}' WHERE burst_exempt;
CREATE INDEX verify_decisions_agent_recent ON verify_decisions (agent_id, created_at)
  WHERE decision->>'verdict' = 'DENY' AND decision->'burst_exempt' IS NULL;
ALTER TABLE verify_decisions DROP COLUMN burst_exempt;
