-- Up Migration
-- Change notices of the tables that are Citus reference tables (docs/scale.md, "Change notices
-- from workers"): their triggers NOTIFY only where writ_notify_here() holds (plain Postgres:
-- always; Citus: the coordinator's copy), since a reference-table write fires the trigger on
-- every node's copy and the workers' copies are written inside a two-phase commit, where
-- NOTIFY is refused. The agents table gets a trigger function of its own (the agreements'
-- trigger keeps writ_agents_changed: a per-agent shard's notice is sent by its worker). The
-- bodies live in sql/functions/ (re-applied on every migrate); they are created here too
-- because the trigger below needs its function now.

CREATE OR REPLACE FUNCTION writ_notify_here() RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE g integer;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_local_group') IS NULL THEN RETURN true; END IF;
  EXECUTE 'SELECT groupid FROM pg_catalog.pg_dist_local_group' INTO g;
  RETURN g IS NULL OR g = 0;
END $$;

CREATE OR REPLACE FUNCTION writ_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF writ_notify_here() THEN PERFORM pg_notify('writ_changes', 'keys'); END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION writ_agent_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT writ_notify_here() THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  RETURN NULL;
END $$;

DROP TRIGGER agents_changed ON agents;
CREATE TRIGGER agents_changed AFTER INSERT OR UPDATE OR DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION writ_agent_row_changed();

-- Down Migration
DROP TRIGGER agents_changed ON agents;
CREATE TRIGGER agents_changed AFTER INSERT OR UPDATE OR DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION writ_agents_changed();
DROP FUNCTION writ_agent_row_changed();
CREATE OR REPLACE FUNCTION writ_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('writ_changes', 'keys');
  RETURN NULL;
END $$;
DROP FUNCTION writ_notify_here();
