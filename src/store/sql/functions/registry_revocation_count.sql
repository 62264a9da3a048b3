-- The registry's count of an agent's revocations: its revoked delegations plus its agreements
-- that are revoked here or named by a pushed principal revocation (each record counted once).
-- PL/pgSQL (a SQL function's statement is planned with its parameter unknown, which Citus
-- cannot route).
CREATE OR REPLACE FUNCTION registry_revocation_count(p_agent_id text) RETURNS bigint
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT count(*) FROM delegations WHERE agent_id = p_agent_id AND revoked_at IS NOT NULL)
       + (SELECT count(*) FROM agreements a WHERE a.agent_id = p_agent_id
            AND (a.revoked_at IS NOT NULL OR EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = a.agreement_id AND r.agent_id = a.agent_id)));
END $$;
