-- Up Migration
-- writ_spend_read (0180_ledger_heads.sql) reads less per spend (docs/verify.md, "Group commit
-- of ALLOWs"; EXPLAIN ANALYZE of its query, 16 spends: the intent's currency was its largest
-- part, about 8 us a spend, the delegation's two scans next):
-- - A spend may name the agreement revision it was decided on (`rev`; its `currency` is then
--   its intent's currency in that revision, src/verify/pipeline/spend-request.ts). While that
--   revision is the stored one, its intent's currency is the spend's, and the signed record is
--   not decompressed and searched; otherwise (another revision, or no `rev`) it is, as before.
-- - The delegation's total in its currency and its spend in other currencies come from one
--   scan of its agreements' totals instead of two.
-- Same arguments and columns: the callers that send no `rev` are answered as before.
CREATE OR REPLACE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spent text, delegation_mixed boolean, existing jsonb, released boolean, decided boolean)
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
    (SELECT e.entry FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id AND e.outcome = 'allowed'),
    coalesce((SELECT true FROM ledger_entries f WHERE f.agreement_id = s.agreement_id AND f.action_id = s.action_id AND f.outcome = 'failed'), false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id), false))
  FROM jsonb_to_recordset(p_spends) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text, rev bigint)
  -- LIMIT keeps the lookup a per-spend index probe (a generic plan may otherwise hash-join a seq scan of agreements).
  LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agreement_id = s.agreement_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM agreement_ledger_heads y WHERE y.agreement_id = s.agreement_id LIMIT 1) h ON true
  -- The delegation's spend in its currency and whether any is in another, in one scan of its
  -- agreements' totals (none without a delegation budget).
  LEFT JOIN LATERAL (SELECT sum(t.spent_minor) FILTER (WHERE t.currency = s.dcur) AS spent, bool_or(t.currency <> s.dcur AND t.spent_minor > 0) AS mixed
                     FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE s.dcur IS NOT NULL AND b.delegation_id = a.delegation_id) ds ON true
  ORDER BY s.i;
END $$;

-- Down Migration
CREATE OR REPLACE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spent text, delegation_mixed boolean, existing jsonb, released boolean, decided boolean)
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
    (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1),
    coalesce((SELECT d.revoked_at IS NOT NULL FROM delegations d WHERE d.delegation_id = a.delegation_id), false),
    coalesce((SELECT true FROM revocations r WHERE r.agreement_id = s.agreement_id LIMIT 1), false),
    coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    (CASE WHEN s.dcur IS NULL THEN 0
      ELSE coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE b.delegation_id = a.delegation_id AND t.currency = s.dcur), 0) END)::text,
    CASE WHEN s.dcur IS NULL THEN false
      ELSE coalesce((SELECT true FROM agreement_spend t JOIN agreements b ON b.agreement_id = t.agreement_id
                     WHERE b.delegation_id = a.delegation_id AND t.currency <> s.dcur AND t.spent_minor > 0 LIMIT 1), false) END,
    (SELECT e.entry FROM ledger_entries e WHERE e.agreement_id = s.agreement_id AND e.action_id = s.action_id AND e.outcome = 'allowed'),
    coalesce((SELECT true FROM ledger_entries f WHERE f.agreement_id = s.agreement_id AND f.action_id = s.action_id AND f.outcome = 'failed'), false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id), false))
  FROM jsonb_to_recordset(p_spends) AS s(i int, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, dcur text)
  -- LIMIT keeps the lookup a per-spend index probe (a generic plan may otherwise hash-join a seq scan of agreements).
  LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agreement_id = s.agreement_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM agreement_ledger_heads y WHERE y.agreement_id = s.agreement_id LIMIT 1) h ON true
  ORDER BY s.i;
END $$;
