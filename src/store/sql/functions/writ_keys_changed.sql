-- Trigger of api_keys and orgs: any change drops every cached credential (notice `keys`), sent
-- from the coordinator's copy only when they are Citus reference tables (writ_notify_here).
CREATE OR REPLACE FUNCTION writ_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF writ_notify_here() THEN PERFORM pg_notify('writ_changes', 'keys'); END IF;
  RETURN NULL;
END $$;
