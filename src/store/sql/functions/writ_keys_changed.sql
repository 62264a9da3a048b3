-- Trigger of api_keys and orgs: any change drops every cached credential (notice `keys`).
CREATE OR REPLACE FUNCTION writ_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('writ_changes', 'keys');
  RETURN NULL;
END $$;
