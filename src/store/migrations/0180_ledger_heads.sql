-- Up Migration
-- The ledger head of an agreement in a narrow row of its own (src/store/ledger/head.ts,
-- docs/verify.md "Group commit of ALLOWs"): every spend and outcome moves the head, and an
-- UPDATE of the agreements row wrote a new version of the whole row, the signed record
-- included (about 2 kB), and its WAL. A row here exists once the ledger has an entry; no row
-- is sequence 0 (an empty ledger). Writers hold the agreements row's lock (FOR NO KEY UPDATE),
-- as before; readers join on agreement_id. updated_at is when the head last moved (the
-- agreements row's updated_at is when its record, status or revocation last changed).
CREATE TABLE agreement_ledger_heads (
  agreement_id    text        PRIMARY KEY REFERENCES agreements (agreement_id) ON DELETE CASCADE,
  ledger_sequence integer     NOT NULL CHECK (ledger_sequence >= 1),
  ledger_head     text        NOT NULL CHECK (writ_is_sha256(ledger_head)),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
INSERT INTO agreement_ledger_heads (agreement_id, ledger_sequence, ledger_head, updated_at)
SELECT agreement_id, ledger_sequence, ledger_head, updated_at FROM agreements WHERE ledger_sequence > 0;
ALTER TABLE agreements DROP COLUMN ledger_sequence, DROP COLUMN ledger_head;

-- The spend transaction's two functions (0160_spend_batch.sql) on the new table.
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

-- Down Migration
ALTER TABLE agreements ADD COLUMN ledger_sequence integer NOT NULL DEFAULT 0 CHECK (ledger_sequence >= 0),
  ADD COLUMN ledger_head text CHECK (ledger_head ~ '^sha256:[0-9a-f]{64}$'),
  ADD CHECK ((ledger_sequence = 0) = (ledger_head IS NULL));
UPDATE agreements a SET ledger_sequence = h.ledger_sequence, ledger_head = h.ledger_head
FROM agreement_ledger_heads h WHERE h.agreement_id = a.agreement_id;
DROP FUNCTION writ_spend_write(jsonb);
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
  SELECT s.i, a.agreement_id IS NOT NULL, a.ledger_sequence, a.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
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
  ORDER BY s.i;
END $$;

CREATE FUNCTION writ_spend_write(p_rows jsonb)
RETURNS TABLE (agent_id text, action_id text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE h record;
BEGIN
  INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
  SELECT r.a, (r.e->>'sequence')::int, r.e, r.e->>'action_id', 'allowed', r.e->>'intent_id', r.e->>'currency', r.m, r.e->>'entry_hash', r.e->>'prev_entry_hash'
  FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb, m bigint);
  -- One index probe per agreement (a join could be planned as a seq scan of agreements).
  FOR h IN SELECT DISTINCT ON (r.a) r.a, (r.e->>'sequence')::int AS seq, r.e->>'entry_hash' AS head
           FROM jsonb_to_recordset(p_rows) AS r(a text, e jsonb) ORDER BY r.a, (r.e->>'sequence')::int DESC LOOP
    UPDATE agreements x SET ledger_sequence = h.seq, ledger_head = h.head, updated_at = now() WHERE x.agreement_id = h.a;
  END LOOP;
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
DROP TABLE agreement_ledger_heads;
