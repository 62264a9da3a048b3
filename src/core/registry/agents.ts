/**
 * Registered agents: verification levels, statuses and their moves, and the shapes of the ids
 * an operator supplies.
 *
 * Rules (docs/registry.md, "Agents"):
 * - verification_level: `institution_attested` (a regulated institution vouches for the agent
 *   and its principal), `operator_verified` (the operator verified the principal itself),
 *   `self_declared` (nobody verified anything);
 * - status: `active` on registration; `active` <-> `suspended`; either -> `retired`; `retired`
 *   is final. Setting the current status again is allowed (no change);
 * - agent_id: 1–128 characters, a letter or digit first, then letters, digits and `._:@-`;
 * - principal_id: pseudonymous, `prn_` + 1–64 of `[A-Za-z0-9_-]` (so never an e-mail address).
 */

/** Verification levels, strongest first. */
export const VERIFICATION_LEVELS = ["institution_attested", "operator_verified", "self_declared"] as const;

/** A verification level. */
export type VerificationLevel = (typeof VERIFICATION_LEVELS)[number];

/** True when `v` is one of VERIFICATION_LEVELS. */
export function isVerificationLevel(v: unknown): v is VerificationLevel {
  return typeof v === "string" && (VERIFICATION_LEVELS as readonly string[]).includes(v);
}

/** Agent statuses. */
export const AGENT_STATUSES = ["active", "suspended", "retired"] as const;

/** An agent status. */
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** True when `v` is one of AGENT_STATUSES. */
export function isAgentStatus(v: unknown): v is AgentStatus {
  return typeof v === "string" && (AGENT_STATUSES as readonly string[]).includes(v);
}

/** Whether an agent may move from `from` to `to` (see the module comment). */
export function canMoveAgent(from: AgentStatus, to: AgentStatus): boolean {
  if (from === to) return true;
  return from !== "retired";
}

/** Pattern of an agent id. */
export const AGENT_ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$";

/** Pattern of a pseudonymous principal id. */
export const PRINCIPAL_ID_PATTERN = "^prn_[A-Za-z0-9_-]{1,64}$";

/** True when `v` is a well-formed agent id. */
export function isAgentId(v: unknown): v is string {
  return typeof v === "string" && new RegExp(AGENT_ID_PATTERN).test(v);
}
