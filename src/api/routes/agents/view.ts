/**
 * How an agent is shown: the record of `GET /v1/agents/{agent_id}` and `PATCH`, with the
 * principal_id only for the organization that registered the agent (tenant isolation).
 */
import type { PublicJwk } from "../../../core/jose/index.js";
import { AGENT_STATUSES, VERIFICATION_LEVELS } from "../../../core/registry/index.js";
import type { AgentRecord, AgentStanding } from "../../../store/index.js";

/** The agent record as answered. */
export interface AgentView {
  agent_id: string;
  status: string;
  verification_level: string;
  fingerprint: string;
  score: number;
  public_key: PublicJwk;
  operator_org_id: string;
  registered_at: string;
  updated_at: string;
  principal_id?: string;
  /** Present (true) when the registration proved possession of the key. */
  key_proven?: true;
  /** The agent whose proven registration of this key displaced this one (then suspended for good). */
  displaced_by?: string;
}

/** The view of `agent` for organization `viewerOrgId`. */
export function agentView(agent: AgentRecord, standing: AgentStanding, viewerOrgId: string): AgentView {
  const view: AgentView = {
    agent_id: agent.agent_id,
    status: agent.status,
    verification_level: agent.verification_level,
    fingerprint: agent.fingerprint,
    score: standing.trust_score.score,
    public_key: agent.public_key,
    operator_org_id: agent.org_id,
    registered_at: agent.registered_at.toISOString(),
    updated_at: agent.updated_at.toISOString(),
  };
  if (viewerOrgId === agent.org_id) view.principal_id = agent.principal_id;
  if (agent.key_proven) view.key_proven = true;
  if (agent.displaced_by !== null) view.displaced_by = agent.displaced_by;
  return view;
}

/** JSON schema of an AgentView. */
export const agentViewSchema = {
  type: "object",
  required: ["agent_id", "status", "verification_level", "fingerprint", "score", "public_key", "operator_org_id", "registered_at"],
  properties: {
    agent_id: { type: "string" },
    status: { type: "string", enum: [...AGENT_STATUSES] },
    verification_level: { type: "string", enum: [...VERIFICATION_LEVELS] },
    fingerprint: { type: "string" },
    score: { type: "integer" },
    public_key: {
      type: "object",
      properties: { kty: { type: "string" }, crv: { type: "string" }, x: { type: "string" }, y: { type: "string" } },
    },
    operator_org_id: { type: "string" },
    registered_at: { type: "string", format: "date-time" },
    updated_at: { type: "string", format: "date-time" },
    principal_id: { type: "string", description: "Only for the organization that registered the agent" },
    key_proven: { type: "boolean", description: "true when the registration proved possession of the key (key_proof); absent otherwise" },
    displaced_by: { type: "string", description: "The agent whose proven registration of this key displaced this one (suspended for good)" },
  },
} as const;
