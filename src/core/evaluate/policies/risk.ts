/**
 * The service's own REVOKE policy (documented in docs/evaluation.md):
 * - a risk score at or above `policy.revokeRiskScore` (default 90) -> RISK_REVOKE_THRESHOLD;
 * - `policy.denialBurstCount` (default 5) or more denied attempts by the agent inside the burst
 *   window the caller counts (default 60 s) -> DENIED_ATTEMPT_BURST; 0 turns it off. Which
 *   denials count is `countsAsAttempt` (../reasons.ts).
 * Both deny the action and make svc_decision REVOKE so the caller revokes the delegation.
 */
import type { EvalState, Findings } from "../state.js";

export function revokeOnRisk(s: EvalState, out: Findings): void {
  const { riskScore, recentDenials, policy } = s.ctx;
  if (riskScore !== undefined && riskScore >= policy.revokeRiskScore) {
    out.add("RISK_REVOKE_THRESHOLD", `risk score ${riskScore} reached the revoke threshold ${policy.revokeRiskScore}`);
  }
  // A count of 0 turns the rule off (WRIT_DENIED_ATTEMPT_BURST=0).
  if (recentDenials !== undefined && policy.denialBurstCount > 0 && recentDenials >= policy.denialBurstCount) {
    out.add("DENIED_ATTEMPT_BURST", `${recentDenials} denied attempts in the burst window (limit ${policy.denialBurstCount})`);
  }
}
