-- Round trip 1 of the spend transaction (src/store/ledger/spend.ts, which decides every spend
-- from what this reads; it decides nothing itself):
-- - Locks: the delegation rows of p_delegations in the order (depth, id), depth the length of
--   the row's chain (ancestors before their descendants: root first, the child last), each by
--   its key: a spend's delegation (did) by its agreement's agent, an ancestor by the agent its
--   child's row stored (chain_agents; one not stored then is not locked nor read), then the
--   spends' agreement rows (each by its key: the spend's `ag` and agreement_id) in the order
--   (agent, id); one order for every transaction, so no two spend batches deadlock
--   (src/store/ledger/index.ts). p_agreements (the batch's agreement ids) is what the Citus
--   branch locks by; the plain branch locks the spends' own rows.
-- - Then, in a query that starts after the locks are held (it sees every spend and release
--   committed before), one row per spend of p_spends ({i, ag (the agreement's
--   agent: every per-agent row is read by it), agreement_id, intent_id, action_id, currency,
--   agent_id (the answer's), parent, del, rev}): its agreement's head and state, its delegation's
--   state and stored chain, the intent's total, the agreement's total in the spend's currency
--   (parent), the delegation's spend (del) as [currency, minor units] pairs (its own
--   agreements', or its subtree's once it has descendants: writ_subtree_spend), the stored
--   answer and the action's entries; and, when the delegation has a chain, one object per
--   STORED ancestor, root first: {id, currency, cumulative (the scope's cumulative_maximum as
--   stored, or null), revoked, spend (its subtree's, pairs; absent without a cumulative
--   maximum)}; and the agreement's agent (agreement_agent). Ancestors are locked only when the
--   caller put them in p_delegations.
-- Every lookup is an index probe per spend (LIMIT keeps a lookup a probe: a generic plan may
-- otherwise hash-join a scan); no sequential scans, whatever the statistics were when the plan
-- was made. The spend's currency IS its intent's in the revision it was decided on (rev):
-- while that revision is stored, the signed record (about 2 kB, compressed) is not read.
-- On a Citus cluster (the extension's catalog is there) the same reads run per agent, each
-- statement naming the agent as a constant (a PL/pgSQL variable: custom plans, the layout's
-- plan_cache_mode) so that Citus routes it to the agent's worker (a router plan, one task);
-- a stored ancestor's row and a subtree's spend, which may be another agent's, are read in
-- statements of their own before the spends' query (docs/scale.md, "A delegation chain across
-- agents"): writ_spend_read_citus. Its rows come per agent: the caller orders them by i.
-- Plain Postgres never plans that branch.
CREATE OR REPLACE FUNCTION writ_spend_read(p_delegations text[], p_agreements text[], p_spends jsonb)
RETURNS TABLE (i int, agreement_found boolean, ledger_sequence int, ledger_head text, status text, revoked boolean, delegation_id text,
               intent_currency text, delegation_revoked boolean, pushed_revocation boolean, intent_spent text, total_spent text,
               delegation_spend jsonb, existing jsonb, released boolean, decided boolean,
               existing_request_hash text, imported boolean, delegation_chain text[], ancestors jsonb, agreement_agent text)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    RETURN QUERY SELECT * FROM writ_spend_read_citus(p_delegations, p_agreements, p_spends);
    RETURN;
  END IF;
  -- The delegation rows, each by its key (agent_id, delegation_id): a spend's own delegation
  -- (did) is its agreement's agent's; its ancestors' agents are the ones its row stored
  -- (chain_agents). Then the spends' agreement rows, each by its key (the spend's agent and
  -- agreement_id). One statement each, not one per row: the keys sorted in the lock order
  -- ((depth, id), then (agent, id)), each row locked by a probe of its key (a LATERAL with
  -- LIMIT, so a generic plan never hashes a scan of the table) as the sorted keys come (a
  -- lateral subquery runs once per outer row, in the outer rows' order). bench:periods-batch
  -- measured about 8 us a spend for a statement per agent.
  PERFORM 1
  FROM (SELECT DISTINCT x.agent_id, x.delegation_id, x.depth
        FROM jsonb_to_recordset(p_spends) AS s(ag text, did text)
        CROSS JOIN LATERAL (SELECT z.agent_id, z.delegation_id, cardinality(z.chain_ids) AS depth, z.chain_ids, z.chain_agents
                            FROM delegations z WHERE z.agent_id = s.ag AND z.delegation_id = s.did LIMIT 1) c
        CROSS JOIN LATERAL (SELECT c.agent_id, c.delegation_id, c.depth
                            UNION ALL SELECT u.ag, u.id, (u.n - 1)::int FROM unnest(c.chain_agents, c.chain_ids) WITH ORDINALITY AS u(ag, id, n) WHERE u.ag IS NOT NULL) x
        WHERE x.delegation_id = ANY (p_delegations)
        ORDER BY x.depth, x.delegation_id, x.agent_id) k
  CROSS JOIN LATERAL (SELECT 1 FROM delegations d WHERE d.agent_id = k.agent_id AND d.delegation_id = k.delegation_id LIMIT 1 FOR NO KEY UPDATE) l;
  PERFORM 1
  FROM (SELECT DISTINCT s.ag, s.agreement_id FROM jsonb_to_recordset(p_spends) AS s(ag text, agreement_id text)
        WHERE s.ag IS NOT NULL ORDER BY s.ag, s.agreement_id) k
  CROSS JOIN LATERAL (SELECT 1 FROM agreements a WHERE a.agent_id = k.ag AND a.agreement_id = k.agreement_id LIMIT 1 FOR NO KEY UPDATE) l;
  RETURN QUERY
  SELECT s.i, a.agreement_id IS NOT NULL, CASE WHEN a.agreement_id IS NULL THEN NULL ELSE coalesce(h.ledger_sequence, 0) END, h.ledger_head, a.status, a.revoked_at IS NOT NULL, a.delegation_id,
    CASE WHEN s.rev IS NOT NULL AND a.revision = s.rev THEN s.currency
      ELSE (SELECT m->>'currency' FROM jsonb_array_elements(a.record->'mandates') m WHERE m->>'intent_id' = s.intent_id LIMIT 1) END,
    coalesce(dd.revoked, false),
    coalesce((SELECT true FROM revocations r WHERE r.agreement_id = s.agreement_id AND r.agent_id = s.ag LIMIT 1), false),
    coalesce((SELECT t.spent_minor FROM agreement_spend t WHERE t.agent_id = s.ag AND t.agreement_id = s.agreement_id AND t.intent_id = s.intent_id), 0)::text,
    (CASE WHEN s.parent THEN coalesce((SELECT sum(t.spent_minor) FROM agreement_spend t WHERE t.agent_id = s.ag AND t.agreement_id = s.agreement_id AND t.currency = s.currency), 0)
      ELSE 0 END)::text,
    -- The delegation's spend: its own agreements' totals, or its subtree's once it has
    -- descendants. A CASE, so that only the branch that applies runs (a lateral join's
    -- condition may be planned as a filter applied after the join, which runs it anyway).
    CASE WHEN NOT s.del OR a.delegation_id IS NULL THEN NULL
      WHEN coalesce(dd.has_descendants, false) THEN writ_subtree_spend(a.agent_id, a.delegation_id)
      ELSE (SELECT coalesce(jsonb_agg(jsonb_build_array(t.currency, t.spent_minor::text)), '[]'::jsonb)
            FROM agreements b JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
            WHERE b.agent_id = a.agent_id AND b.delegation_id = a.delegation_id) END,
    le.entry,
    coalesce(le.released, false),
    (s.agent_id IS NOT NULL AND coalesce((SELECT true FROM verify_decisions v WHERE v.agent_id = s.agent_id AND v.action_id = s.action_id), false)),
    le.request_hash,
    coalesce(le.imported, false),
    dd.chain_ids,
    CASE WHEN cardinality(dd.chain_ids) > 0 THEN
      (SELECT jsonb_agg(jsonb_build_object('id', p.delegation_id, 'currency', p.record->'scope'->>'currency', 'cumulative', p.record->'scope'->'cumulative_maximum',
                                           'revoked', p.revoked_at IS NOT NULL)
                        || CASE WHEN (p.record->'scope'->'cumulative_maximum') IS NOT NULL THEN jsonb_build_object('spend', writ_subtree_spend(p.agent_id, p.delegation_id)) ELSE '{}'::jsonb END
                        ORDER BY cardinality(p.chain_ids))
       FROM unnest(dd.chain_agents, dd.chain_ids) AS u(ag, id) JOIN delegations p ON p.agent_id = u.ag AND p.delegation_id = u.id)
    END,
    a.agent_id
  FROM jsonb_to_recordset(p_spends) AS s(i int, ag text, did text, agreement_id text, intent_id text, action_id text, currency text, agent_id text, parent boolean, del boolean, rev bigint)
  LEFT JOIN LATERAL (SELECT * FROM agreements x WHERE x.agent_id = s.ag AND x.agreement_id = s.agreement_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT y.ledger_sequence, y.ledger_head FROM agreement_ledger_heads y WHERE y.agent_id = s.ag AND y.agreement_id = s.agreement_id LIMIT 1) h ON true
  LEFT JOIN LATERAL (SELECT z.revoked_at IS NOT NULL AS revoked, z.chain_ids, z.chain_agents, z.has_descendants FROM delegations z WHERE z.agent_id = a.agent_id AND z.delegation_id = a.delegation_id LIMIT 1) dd ON true
  -- The action's entries (an index range scan of ledger_entries_action_outcome_key; none for a new action).
  -- released: a failed, or a hold step that gave budget back (voided, expired, released).
  LEFT JOIN LATERAL (SELECT (array_agg(e.entry) FILTER (WHERE e.outcome = 'allowed'))[1] AS entry,
                            (array_agg(e.request_hash) FILTER (WHERE e.outcome = 'allowed'))[1] AS request_hash,
                            bool_or(e.outcome IN ('failed', 'voided', 'expired', 'released')) AS released, bool_or(e.imported) AS imported
                     FROM ledger_entries e WHERE e.agent_id = s.ag AND e.agreement_id = s.agreement_id AND e.action_id = s.action_id) le ON true
  ORDER BY s.i;
END $$;
