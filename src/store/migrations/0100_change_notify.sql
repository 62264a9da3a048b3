-- Up Migration
-- Change notices for the data plane's in-memory caches (src/store/changes.ts): every write that
-- can change what a verify of an agent reads, or what an API key authenticates as, NOTIFYs the
-- channel `writ_changes` when its transaction commits, whichever code path (or psql session)
-- wrote it. Payloads: `agent:<agent_id>` (drop that agent's verify snapshot) and `keys` (drop
-- every cached credential). Postgres folds identical notices of one transaction into one.
--
-- Not notified, on purpose: a spend (a ledger entry, a higher agreement_spend total, the
-- agreement's ledger head), the hot path; a cached total that is too low is re-checked by the
-- spend transaction under its lock (docs/verify.md, "Caches"). A LOWER total (a failed
-- payment releasing its amount) is notified, since a cached total that is too high would
-- refuse a payment the budget allows.

CREATE FUNCTION writ_notify_agent(p_agent_id text) RETURNS void LANGUAGE sql AS $$
  SELECT pg_notify('writ_changes', 'agent:' || p_agent_id) WHERE p_agent_id IS NOT NULL
$$;

CREATE FUNCTION writ_agents_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER agents_changed AFTER INSERT OR UPDATE OR DELETE ON agents
  FOR EACH ROW EXECUTE FUNCTION writ_agents_changed();

-- Agreements: not when only the ledger head moved (a spend).
CREATE TRIGGER agreements_changed AFTER INSERT OR DELETE ON agreements
  FOR EACH ROW EXECUTE FUNCTION writ_agents_changed();
CREATE TRIGGER agreements_updated AFTER UPDATE ON agreements
  FOR EACH ROW WHEN (ROW(OLD.revision, OLD.status, OLD.revoked_at, OLD.agent_id, OLD.org_id, OLD.delegation_id)
                     IS DISTINCT FROM ROW(NEW.revision, NEW.status, NEW.revoked_at, NEW.agent_id, NEW.org_id, NEW.delegation_id))
  EXECUTE FUNCTION writ_agents_changed();

-- Delegations: their own agent and the agents of every agreement bound to them.
CREATE FUNCTION writ_delegations_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM writ_notify_agent(OLD.agent_id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM writ_notify_agent(NEW.agent_id); END IF;
  FOR r IN SELECT DISTINCT agent_id FROM agreements
           WHERE delegation_id = CASE WHEN TG_OP = 'DELETE' THEN OLD.delegation_id ELSE NEW.delegation_id END LOOP
    PERFORM writ_notify_agent(r.agent_id);
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER delegations_changed AFTER INSERT OR UPDATE OR DELETE ON delegations
  FOR EACH ROW EXECUTE FUNCTION writ_delegations_changed();

-- Spend totals: only when one goes down (or disappears).
CREATE FUNCTION writ_spend_released() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM writ_notify_agent(a.agent_id) FROM agreements a WHERE a.agreement_id = OLD.agreement_id;
  RETURN NULL;
END $$;

CREATE TRIGGER agreement_spend_released AFTER UPDATE ON agreement_spend
  FOR EACH ROW WHEN (NEW.spent_minor < OLD.spent_minor OR NEW.agreement_id <> OLD.agreement_id OR NEW.intent_id <> OLD.intent_id)
  EXECUTE FUNCTION writ_spend_released();
CREATE TRIGGER agreement_spend_deleted AFTER DELETE ON agreement_spend
  FOR EACH ROW EXECUTE FUNCTION writ_spend_released();

-- API keys and organizations: any change drops every cached credential.
CREATE FUNCTION writ_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('writ_changes', 'keys');
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION writ_keys_changed();
CREATE TRIGGER orgs_changed AFTER UPDATE OR DELETE ON orgs
  FOR EACH STATEMENT EXECUTE FUNCTION writ_keys_changed();

-- Down Migration
DROP TRIGGER orgs_changed ON orgs;
DROP TRIGGER api_keys_changed ON api_keys;
DROP FUNCTION writ_keys_changed();
DROP TRIGGER agreement_spend_deleted ON agreement_spend;
DROP TRIGGER agreement_spend_released ON agreement_spend;
DROP FUNCTION writ_spend_released();
DROP TRIGGER delegations_changed ON delegations;
DROP FUNCTION writ_delegations_changed();
DROP TRIGGER agreements_updated ON agreements;
DROP TRIGGER agreements_changed ON agreements;
DROP TRIGGER agents_changed ON agents;
DROP FUNCTION writ_agents_changed();
DROP FUNCTION writ_notify_agent(text);
