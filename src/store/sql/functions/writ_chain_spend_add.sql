-- Adds spend to the running totals of the stored ancestors above agreements (delegation_spend,
-- migrations/0540_delegation_spend.sql; docs/scale.md, "A delegation chain across agents").
-- p_rows: one object per change of an agreement's total, {ag: the agreement's agent, a:
-- agreement_id, c: the currency (or i: the intent, whose stored total's currency is taken), m:
-- minor units, negative to give budget back}. For each, the agreement's delegation is read by
-- its key (the agreement's agent); every link of its stored chain whose agent the row stored
-- (chain_agents: the link was stored when the chain was) gets m in c. An agreement without a
-- delegation, or whose delegation has no stored link, changes nothing.
-- The totals are raised one statement per (ancestor, currency), by the ancestor's key, root
-- first (depth, then id: the lock order of src/store/ledger/index.ts), each a single-row
-- INSERT … VALUES: on a Citus cluster each goes to the ancestor's worker alone (a transaction
-- that raises an ancestor of another agent then commits in two phases). The spend transaction
-- calls it holding every stored ancestor's row lock (it read the totals under them:
-- src/store/ledger/spend.ts); a release calls it without them (a lower total never lets a
-- spend through that the higher one refused).
CREATE OR REPLACE FUNCTION writ_chain_spend_add(p_rows jsonb)
RETURNS void LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
DECLARE r record; k record; v_ccy text; v_new boolean; v_links jsonb := '[]';
BEGIN
  FOR r IN SELECT x.ag, x.a, x.c, x.i, sum(x.m)::bigint AS m FROM jsonb_to_recordset(p_rows) AS x(ag text, a text, c text, i text, m bigint)
           WHERE x.ag IS NOT NULL GROUP BY 1, 2, 3, 4 LOOP
    CONTINUE WHEN r.m = 0;
    FOR k IN SELECT z.chain_ids, z.chain_agents FROM agreements b JOIN delegations z ON z.agent_id = b.agent_id AND z.delegation_id = b.delegation_id
             WHERE b.agent_id = r.ag AND z.agent_id = r.ag AND b.agreement_id = r.a AND cardinality(z.chain_ids) > 0 LOOP
      v_ccy := r.c;
      IF v_ccy IS NULL THEN
        SELECT t.currency INTO v_ccy FROM agreement_spend t WHERE t.agent_id = r.ag AND t.agreement_id = r.a AND t.intent_id = r.i;
      END IF;
      CONTINUE WHEN v_ccy IS NULL;
      v_links := v_links || (SELECT coalesce(jsonb_agg(jsonb_build_array(u.ag, u.id, u.n, v_ccy, r.m::text)), '[]'::jsonb)
                             FROM unnest(k.chain_agents, k.chain_ids) WITH ORDINALITY AS u(ag, id, n) WHERE u.ag IS NOT NULL);
    END LOOP;
  END LOOP;
  FOR k IN SELECT e->>0 AS ag, e->>1 AS id, e->>3 AS ccy, sum((e->>4)::bigint)::bigint AS m, min((e->>2)::int) AS depth
           FROM jsonb_array_elements(v_links) e GROUP BY 1, 2, 3 ORDER BY 5, 2, 1, 3 LOOP
    CONTINUE WHEN k.m = 0;
    INSERT INTO delegation_spend AS t (agent_id, delegation_id, currency, spent_minor) VALUES (k.ag, k.id, k.ccy, k.m)
    ON CONFLICT ON CONSTRAINT delegation_spend_pkey DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor
    RETURNING (t.xmax = 0) INTO v_new;
    -- The ancestor's first total: from now on its own spend reads its subtree's (has_descendants,
    -- read by writ_spend_read). Set here, in the transaction that writes the total (the spend's
    -- holds the ancestor's row lock), not when the child is stored: a child's store then writes
    -- nothing on the ancestor's shard. A row only marked sends no change notice
    -- (writ_delegations_changed).
    IF v_new THEN
      UPDATE delegations d SET has_descendants = true WHERE d.agent_id = k.ag AND d.delegation_id = k.id AND NOT d.has_descendants;
    END IF;
  END LOOP;
END $$;
