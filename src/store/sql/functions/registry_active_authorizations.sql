-- The registry's count of an agent's active authorizations: its live (active or accepted, not
-- revoked) agreements whose delegation, when it has one, is not revoked. PL/pgSQL (a SQL
-- function's statement is planned with its parameter unknown, which Citus cannot route); the
-- delegation is joined by its key (an agreement's delegation is its agent's).
CREATE OR REPLACE FUNCTION registry_active_authorizations(p_agent_id text) RETURNS bigint
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT count(*)::bigint FROM agreements a LEFT JOIN delegations d ON d.agent_id = a.agent_id AND d.delegation_id = a.delegation_id
    WHERE a.agent_id = p_agent_id AND a.revoked_at IS NULL AND a.status IN ('active', 'accepted')
      AND (d.delegation_id IS NULL OR d.revoked_at IS NULL));
END $$;
