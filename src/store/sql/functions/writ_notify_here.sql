-- Whether a change notice of a reference table's trigger is sent from this node
-- (migrations/0350_citus_notices.sql, docs/scale.md "Change notices from workers"): on plain
-- Postgres always; on a Citus node only on the coordinator (Citus group 0). A write of a Citus
-- reference table fires its trigger on every node's copy, the workers' inside a two-phase
-- commit, where a NOTIFY is refused ("cannot PREPARE a transaction that has executed LISTEN,
-- UNLISTEN, or NOTIFY"); the coordinator's copy commits after the workers' PREPARE and is never
-- prepared itself. The extension is looked up first (dynamic SQL), so plain Postgres never
-- names a Citus catalog.
CREATE OR REPLACE FUNCTION writ_notify_here() RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE g integer;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_local_group') IS NULL THEN RETURN true; END IF;
  EXECUTE 'SELECT groupid FROM pg_catalog.pg_dist_local_group' INTO g;
  RETURN g IS NULL OR g = 0;
END $$;
