-- On a Citus cluster: whether the shards of every agent of p_agents are on one node (its node
-- group holds their `delegations` shards, and so all their co-located shards). The spend
-- functions send a batch of several agents whole to that node only then
-- (writ_spend_read_citus, writ_spend_write_citus). The agents' shards are found first (one
-- array), then their placements by the catalog's index.
CREATE OR REPLACE FUNCTION writ_citus_one_node(p_agents text[])
RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT count(DISTINCT p.groupid) = 1 FROM pg_dist_placement p
  WHERE p.shardid = ANY (ARRAY(SELECT get_shard_id_for_distribution_column('public.delegations'::regclass, a) FROM unnest(p_agents) AS a))
$$;
