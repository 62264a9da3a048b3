-- The spend of delegation (p_agent, p_delegation)'s subtree (itself and every delegation whose
-- chain names it), as [currency, minor units as text] pairs, one per intent total (an empty
-- array: none). It reads; the budget rule (which currencies count, whether it is exceeded) is
-- src/core/money/budget.ts. Every agreement and total is read by its agent (the key of the
-- per-agent tables); the descendants are found by their chain, which names the ancestor by id,
-- and kept only where the chain's stored agent of that link (chain_agents) is p_agent: an id
-- names a delegation only with its agent (docs/scale.md, "Organization-scoped ids") (a descendant may belong to another agent, on another shard of a Citus cluster: docs/scale.md,
-- "A delegation chain across agents"). PL/pgSQL, so its plan is made once per connection (a
-- SQL function called from another query is planned again on every call, and Citus cannot
-- plan a SQL function over distributed tables); index probes only (a generic plan may
-- otherwise hash-join every agreement that has a delegation).
CREATE OR REPLACE FUNCTION writ_subtree_spend(p_agent text, p_delegation text)
RETURNS jsonb LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE r record; v jsonb := '[]';
BEGIN
  -- On a Citus cluster: the delegation's own agreements by its agent (one worker), then its
  -- descendants' on every worker (a multi-shard read joined by agent_id; only for a delegation
  -- with descendants: docs/scale.md, "A delegation chain across agents"). Plain Postgres never
  -- plans this branch.
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    FOR r IN SELECT t.currency, t.spent_minor FROM agreements b JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
             WHERE b.agent_id = p_agent AND t.agent_id = p_agent AND b.delegation_id = p_delegation
             UNION ALL
             SELECT t.currency, t.spent_minor FROM delegations c
             JOIN agreements b ON b.agent_id = c.agent_id AND b.delegation_id = c.delegation_id
             JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
             WHERE c.chain_ids @> ARRAY[p_delegation]
               AND EXISTS (SELECT 1 FROM unnest(c.chain_ids, c.chain_agents) AS u(id, ag) WHERE u.id = p_delegation AND u.ag = p_agent) LOOP
      v := v || jsonb_build_array(jsonb_build_array(r.currency, r.spent_minor::text));
    END LOOP;
    RETURN v;
  END IF;
  RETURN (SELECT coalesce(jsonb_agg(jsonb_build_array(t.currency, t.spent_minor::text)), '[]'::jsonb)
    FROM (SELECT p_agent AS agent_id, p_delegation AS delegation_id
          UNION ALL SELECT c.agent_id, c.delegation_id FROM delegations c
          WHERE c.chain_ids @> ARRAY[p_delegation]
            AND EXISTS (SELECT 1 FROM unnest(c.chain_ids, c.chain_agents) AS u(id, ag) WHERE u.id = p_delegation AND u.ag = p_agent)) x
    JOIN agreements b ON b.agent_id = x.agent_id AND b.delegation_id = x.delegation_id
    JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id);
END $$;
