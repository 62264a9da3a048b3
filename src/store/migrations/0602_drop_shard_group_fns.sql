-- Up Migration
-- A Citus worker's spend statements are now those of one function per kind for all of its shard
-- groups (sql/functions/writ_citus_local_fn.sql, which also drops the shard-group functions a
-- worker made before): the functions that named a shard group's function go. On plain Postgres
-- they were never called.
DROP FUNCTION IF EXISTS writ_citus_shard_fns(text, text[]);
DROP FUNCTION IF EXISTS writ_citus_shard_fn(text, text);

-- Down Migration
-- Nothing to make again here: a version that calls writ_citus_shard_fn and writ_citus_shard_fns
-- makes them from its function files, as every migrate applies them.
SELECT 1;
