-- The name of this Citus node's spend function of kind p_kind ('read' or 'write':
-- writ_citus_shard_template's `read_fn` and `write_fn`) for a batch of the agents p_agents, made
-- (or made again) here when it does not cover their shard groups yet; NULL when the list is empty,
-- names no agent (a NULL) or holds an agent whose shards are not placed on this node
-- (pg_dist_placement: a shard moved away keeps its branch in the function and, until Citus cleans
-- it up, its tables' copy here; the caller then runs its statements through Citus). Called by the
-- spend functions Citus runs on the agents' worker (writ_spend_read_agent, writ_spend_write_agent).
-- One function per kind, named by a digest of the template's text, in the public schema, on this
-- node only, with a branch for each shard group placed on this node when it was made: the groups
-- it covers are its comment (their `delegations` shards, '{…}'), so a call costs an index scan of
-- pg_dist_placement for its agents and one of pg_description, and a shard group placed here since
-- makes it again (CREATE OR REPLACE: a session running it meanwhile goes on, its next call uses
-- the new text). It is made with Citus's DDL propagation off, under a transaction-level advisory
-- lock (Writ's namespace, id 40: src/store/locks.ts), so two sessions never make it at once (a
-- session that waited for the lock and finds it made meanwhile uses it; one whose catalog does
-- not show it yet answers NULL for this call). The function of an earlier text (and the
-- shard-group functions of earlier versions) is dropped when it is made. The name does not start
-- with `writ_`, so the Citus layout never makes it a distributed object.
CREATE OR REPLACE FUNCTION writ_citus_local_fn(p_kind text, p_agents text[])
RETURNS text
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_name text := 'writlocal_' || p_kind || '_' || left(CASE p_kind WHEN 'read' THEN md5(writ_citus_shard_template('read_fn') || writ_citus_shard_template('read'))
                                                     ELSE md5(writ_citus_shard_template('write_fn') || writ_citus_shard_template('write')) END, 16);
  v_group int;
  v_agent_sids bigint[];
  v_covers text;
  v_sids bigint[];
  v_branches text := '';
  v_branch text;
  v_old text;
  v_sid bigint;
  v_shard text;
  t text;
  f regprocedure;
BEGIN
  IF p_kind NOT IN ('read', 'write') OR cardinality(p_agents) IS NULL OR cardinality(p_agents) = 0 OR array_position(p_agents, NULL) IS NOT NULL THEN
    RETURN NULL;
  END IF;
  -- The agents' shard groups, each placed here (one index scan of pg_dist_placement), and the
  -- groups the function covers. Plans kept (generic): every look-up is by key.
  SELECT array_agg(DISTINCT get_shard_id_for_distribution_column('public.delegations'::regclass, a)) INTO v_agent_sids FROM unnest(p_agents) AS a;
  v_group := (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l);
  IF (SELECT count(*) FROM pg_catalog.pg_dist_placement p WHERE p.shardid = ANY (v_agent_sids) AND p.groupid = v_group) <> cardinality(v_agent_sids) THEN
    RETURN NULL;
  END IF;
  v_covers := (SELECT d.description FROM pg_catalog.pg_description d
                WHERE d.objoid = to_regproc('public.' || v_name) AND d.classoid = 'pg_catalog.pg_proc'::regclass AND d.objsubid = 0);
  IF v_covers ~ '^\{[0-9,]*\}$' AND v_agent_sids <@ v_covers::bigint[] THEN RETURN v_name; END IF;
  PERFORM pg_advisory_xact_lock(2003986804, 40);
  v_covers := (SELECT d.description FROM pg_catalog.pg_description d
                WHERE d.objoid = to_regproc('public.' || v_name) AND d.classoid = 'pg_catalog.pg_proc'::regclass AND d.objsubid = 0);
  IF v_covers ~ '^\{[0-9,]*\}$' AND v_agent_sids <@ v_covers::bigint[] THEN RETURN v_name; END IF;
  v_sids := ARRAY(SELECT p.shardid FROM pg_catalog.pg_dist_placement p JOIN pg_catalog.pg_dist_shard s ON s.shardid = p.shardid
                   WHERE s.logicalrelid = 'public.delegations'::regclass AND p.groupid = v_group ORDER BY 1);
  FOREACH v_sid IN ARRAY v_sids LOOP
    v_branch := writ_citus_shard_template(p_kind);
    FOREACH t IN ARRAY ARRAY['delegations', 'agreements', 'agreement_ledger_heads', 'ledger_entries', 'ledger_open_holds', 'agreement_spend', 'verify_decisions'] LOOP
      -- The group's shard of t: co-located tables' shards cover the same hash ranges.
      v_shard := shard_name(('public.' || t)::regclass, (SELECT o.shardid FROM pg_catalog.pg_dist_shard d JOIN pg_catalog.pg_dist_shard o
                                                           ON o.logicalrelid = ('public.' || t)::regclass AND o.shardminvalue = d.shardminvalue
                                                         WHERE d.shardid = v_sid));
      IF v_shard IS NULL OR to_regclass(v_shard) IS NULL THEN RETURN NULL; END IF;
      v_branch := replace(v_branch, '{' || t || '}', v_shard);
      v_branch := replace(v_branch, '{' || t || '_pkey}', quote_ident((SELECT c.conname FROM pg_constraint c WHERE c.conrelid = v_shard::regclass AND c.contype = 'p')));
    END LOOP;
    v_shard := shard_name('public.revocations'::regclass, (SELECT s.shardid FROM pg_dist_shard s WHERE s.logicalrelid = 'public.revocations'::regclass));
    IF to_regclass(v_shard) IS NULL THEN RETURN NULL; END IF;
    v_branch := replace(v_branch, '{revocations}', v_shard);
    v_branches := v_branches || CASE WHEN v_branches = '' THEN '    IF' ELSE '    ELSIF' END || ' g.sid = ' || v_sid::text || ' THEN' || E'\n' || v_branch;
  END LOOP;
  v_old := current_setting('citus.enable_ddl_propagation');
  PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
  BEGIN
    EXECUTE replace(replace(writ_citus_shard_template(p_kind || '_fn'), '{fn}', 'public.' || quote_ident(v_name)), '{branches}', v_branches);
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', to_regproc('public.' || v_name)::regprocedure, v_sids::text);
  EXCEPTION WHEN duplicate_function OR unique_violation THEN
    PERFORM set_config('citus.enable_ddl_propagation', v_old, true);
    RETURN NULL;
  END;
  -- The functions this one replaces (of an older text, or the shard-group functions of earlier
  -- versions): a session that named one a moment ago fails its batch, which the group commit then
  -- writes again.
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
           WHERE p.pronamespace = 'public'::regnamespace AND p.proname <> v_name
             AND (p.proname LIKE 'writlocal\_' || p_kind || '\_%' OR p.proname LIKE 'writshard\_' || p_kind || '\_%') LOOP
    EXECUTE 'DROP FUNCTION IF EXISTS ' || f::text;
  END LOOP;
  PERFORM set_config('citus.enable_ddl_propagation', v_old, true);
  RETURN v_name;
END $$;
