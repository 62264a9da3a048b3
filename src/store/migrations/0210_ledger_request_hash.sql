-- Up Migration
-- The ledger is the service's (docs/threat-model/ledger.md):
-- - ledger_entries.request_hash: the hash of the verify request an `allowed` entry answered
--   (the `request_hash` of verify_decisions, src/verify/pipeline/request.ts), kept as long as
--   the ledger. A later verify of the same action_id is matched against it, not against the
--   action_id alone, also after its verify decision was pruned (docs/retention.md): another
--   request is refused (409 ACTION_REUSED). NULL on entries stored before this migration whose
--   decision is gone, and on imported entries; the spend transaction then compares the
--   entry's amount and intent (src/store/ledger/spend.ts).
-- - ledger_entries.imported: the entry came with the agreement's record when the service first
--   stored it (src/store/ledger/import.ts), not from a verify. Its spend counts at face value
--   (a `failed` in it releases nothing); its action_id is spent and never matched by a verify
--   nor moved by an outcome.
ALTER TABLE ledger_entries
  ADD COLUMN request_hash text CONSTRAINT ledger_entries_request_hash_check CHECK (writ_is_sha256(request_hash)),
  ADD COLUMN imported boolean NOT NULL DEFAULT false;
UPDATE ledger_entries e SET request_hash = v.request_hash
FROM (SELECT DISTINCT ON (d.agreement_id, d.action_id) d.agreement_id, d.action_id, d.request_hash FROM verify_decisions d
      WHERE d.agreement_id IS NOT NULL AND d.decision->>'verdict' = 'ALLOW' ORDER BY d.agreement_id, d.action_id, d.created_at) v
WHERE e.outcome = 'allowed' AND e.agreement_id = v.agreement_id AND e.action_id = v.action_id;

-- writ_spend_read (0200_spend_read.sql) with what a replay is matched against: the action's
-- allowed entry (existing) with its request hash (existing_request_hash), whether a failed
-- entry released it (released) and whether any entry of the action was imported (imported),
-- from ONE scan of the action's entries (there were two probes).
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


-- writ_spend_write (0180_ledger_heads.sql) keeps each entry's request hash (r.h) with it.
CREATE OR REPLACE FUNCTION writ_spend_write(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, request_hash)
  SELECT r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash', r.h
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint, h text);
  -- Each agreement's head moves to its last entry of the batch (its narrow row: the
  -- agreement's own row is only locked).
  INSERT INTO agreement_ledger_heads AS x (agreement_id, ledger_sequence, ledger_head)
  SELECT DISTINCT ON (r.a) r.a, (r.e->>'sequence')::int, r.e->>'entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb) ORDER BY r.a, (r.e->>'sequence')::int DESC
  ON CONFLICT ON CONSTRAINT agreement_ledger_heads_pkey
  DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = now();
  INSERT INTO agreement_spend AS t (agreement_id, intent_id, currency, spent_minor)
  SELECT r.a, r.e->>'intent_id', min(r.e->>'currency'), sum(r.m)::bigint
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint) GROUP BY r.a, r.e->>'intent_id'
  ON CONFLICT ON CONSTRAINT agreement_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;
  RETURN QUERY
  WITH stored AS (
    INSERT INTO verify_decisions AS v (agent_id, action_id, agreement_id, request_hash, decision)
    SELECT r.g, r.e->>'action_id', r.a, r.h, r.d
    FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, g text, h text, d jsonb) WHERE r.g IS NOT NULL
    ON CONFLICT ON CONSTRAINT verify_decisions_pkey DO NOTHING
    RETURNING v.agent_id, v.action_id
  )
  SELECT s.agent_id, s.action_id FROM stored s;
END $$;


-- Down Migration
CREATE OR REPLACE FUNCTION writ_spend_write(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
  SELECT r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint);
  -- Each agreement's head moves to its last entry of the batch (its narrow row: the
  -- agreement's own row is only locked).
  INSERT INTO agreement_ledger_heads AS x (agreement_id, ledger_sequence, ledger_head)
  SELECT DISTINCT ON (r.a) r.a, (r.e->>'sequence')::int, r.e->>'entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb) ORDER BY r.a, (r.e->>'sequence')::int DESC
  ON CONFLICT ON CONSTRAINT agreement_ledger_heads_pkey
  DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, ledger_head = EXCLUDED.ledger_head, updated_at = now();
  INSERT INTO agreement_spend AS t (agreement_id, intent_id, currency, spent_minor)
  SELECT r.a, r.e->>'intent_id', min(r.e->>'currency'), sum(r.m)::bigint
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint) GROUP BY r.a, r.e->>'intent_id'
  ON CONFLICT ON CONSTRAINT agreement_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;
  RETURN QUERY
  WITH stored AS (
    INSERT INTO verify_decisions AS v (agent_id, action_id, agreement_id, request_hash, decision)
    SELECT r.g, r.e->>'action_id', r.a, r.h, r.d
    FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, g text, h text, d jsonb) WHERE r.g IS NOT NULL
    ON CONFLICT ON CONSTRAINT verify_decisions_pkey DO NOTHING
    RETURNING v.agent_id, v.action_id
  )
  SELECT s.agent_id, s.action_id FROM stored s;
END $$;


DROP FUNCTION writ_spend_read(text[], text[], jsonb);
CREATE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
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


ALTER TABLE ledger_entries DROP COLUMN imported, DROP COLUMN request_hash;
