-- The name of agent p_agent's function of kind p_kind ('read' or 'write': writ_citus_shard_template)
-- on this Citus node, made here the first time it is asked for; NULL when the agent's shards are
-- not placed on this node (the caller then runs its statements through Citus). Called, through
-- writ_citus_shard_fns, by the spend functions Citus runs on the agent's worker
-- (writ_spend_read_agent, writ_spend_write_agent).
-- One function per kind and shard group (named by the group's `delegations` shard and a digest of
-- the template's text), in the public schema, on this node only: it is made with Citus's DDL
-- propagation off, under a transaction-level advisory lock (Writ's namespace, id 40:
-- src/store/locks.ts), so two sessions never make one twice (a session that waited for the lock
-- and finds the function made meanwhile answers NULL for this call). The name does not start with
-- `writ_`, so the Citus layout never makes it a distributed object.
CREATE OR REPLACE FUNCTION writ_citus_shard_fn(p_kind text, p_agent text)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_sid bigint := get_shard_id_for_distribution_column('public.delegations'::regclass, p_agent);
  v_name text := 'writshard_' || p_kind || '_' || v_sid::text || '_'
    || CASE p_kind WHEN 'read' THEN left(md5(writ_citus_shard_template('read')), 12) ELSE left(md5(writ_citus_shard_template('write')), 12) END;
  v_ddl text;
  v_old text;
  t text;
  v_shard text;
BEGIN
  -- The shard is placed on this node (pg_dist_placement): a moved shard's function stays, and
  -- so does its table until Citus cleans it up, but neither is the agent's any more.
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_placement p
                  WHERE p.shardid = v_sid AND p.groupid = (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l)) THEN
    RETURN NULL;
  END IF;
  IF to_regproc('public.' || v_name) IS NOT NULL THEN RETURN v_name; END IF;
  IF p_kind NOT IN ('read', 'write') OR to_regclass(shard_name('public.delegations'::regclass, v_sid)) IS NULL THEN RETURN NULL; END IF;
  PERFORM pg_advisory_xact_lock(2003986804, 40);
  IF to_regproc('public.' || v_name) IS NOT NULL THEN RETURN v_name; END IF;
  v_ddl := replace(writ_citus_shard_template(p_kind), '{fn}', 'public.' || quote_ident(v_name));
  FOREACH t IN ARRAY ARRAY['delegations', 'agreements', 'agreement_ledger_heads', 'ledger_entries', 'ledger_open_holds', 'agreement_spend', 'verify_decisions'] LOOP
    v_shard := shard_name(('public.' || t)::regclass, get_shard_id_for_distribution_column(('public.' || t)::regclass, p_agent));
    IF to_regclass(v_shard) IS NULL THEN RETURN NULL; END IF;
    v_ddl := replace(v_ddl, '{' || t || '}', v_shard);
    v_ddl := replace(v_ddl, '{' || t || '_pkey}', quote_ident((SELECT c.conname FROM pg_constraint c WHERE c.conrelid = v_shard::regclass AND c.contype = 'p')));
  END LOOP;
  v_shard := shard_name('public.revocations'::regclass, (SELECT s.shardid FROM pg_dist_shard s WHERE s.logicalrelid = 'public.revocations'::regclass));
  IF to_regclass(v_shard) IS NULL THEN RETURN NULL; END IF;
  v_ddl := replace(v_ddl, '{revocations}', v_shard);
  v_old := current_setting('citus.enable_ddl_propagation');
  PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
  BEGIN
    EXECUTE v_ddl;
  EXCEPTION WHEN duplicate_function OR unique_violation THEN
    -- Made by another session that held the lock first: this session's catalog cache may not
    -- show it before its next transaction (waiting on an advisory lock reads no invalidations),
    -- so this call runs its statements through Citus, as for an agent not on this node.
    PERFORM set_config('citus.enable_ddl_propagation', v_old, true);
    RETURN NULL;
  END;
  PERFORM set_config('citus.enable_ddl_propagation', v_old, true);
  RETURN v_name;
END $$;
