-- The spend of delegation (p_agent, p_delegation)'s subtree (itself and every delegation whose
-- stored chain names it with its agent: chain_ids / chain_agents), as [currency, minor units as
-- text] pairs (an empty array: none): its own agreements' intent totals, then the running
-- totals of its descendants' spend (delegation_spend, per currency: migrations/
-- 0540_delegation_spend.sql, kept by writ_chain_spend_add). It reads; the budget rule (which
-- currencies count, whether it is exceeded) is src/core/money/budget.ts. Both reads are by the
-- delegation's own key, so on a Citus cluster they are on its own worker, read under its row
-- lock by the spend transaction, whatever agents its descendants belong to (docs/scale.md, "A
-- delegation chain across agents"). PL/pgSQL, so its plan is made once per connection; index
-- probes only.
CREATE OR REPLACE FUNCTION writ_subtree_spend(p_agent text, p_delegation text)
RETURNS jsonb LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE r record; v jsonb := '[]';
BEGIN
  -- On a Citus cluster: two statements, each naming the agent (router plans on its worker).
  -- Plain Postgres never plans this branch.
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    FOR r IN SELECT t.currency, t.spent_minor FROM agreements b JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
             WHERE b.agent_id = p_agent AND t.agent_id = p_agent AND b.delegation_id = p_delegation LOOP
      v := v || jsonb_build_array(jsonb_build_array(r.currency, r.spent_minor::text));
    END LOOP;
    FOR r IN SELECT s.currency, s.spent_minor FROM delegation_spend s WHERE s.agent_id = p_agent AND s.delegation_id = p_delegation LOOP
      v := v || jsonb_build_array(jsonb_build_array(r.currency, r.spent_minor::text));
    END LOOP;
    RETURN v;
  END IF;
  RETURN (SELECT coalesce(jsonb_agg(jsonb_build_array(x.currency, x.spent_minor::text)), '[]'::jsonb)
    FROM (SELECT t.currency, t.spent_minor FROM agreements b JOIN agreement_spend t ON t.agent_id = b.agent_id AND t.agreement_id = b.agreement_id
          WHERE b.agent_id = p_agent AND t.agent_id = p_agent AND b.delegation_id = p_delegation
          UNION ALL
          SELECT s.currency, s.spent_minor FROM delegation_spend s WHERE s.agent_id = p_agent AND s.delegation_id = p_delegation) x);
END $$;
