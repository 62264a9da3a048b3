/**
 * Policies on the agreement record as a whole: its revocation, the integrity of its event log
 * and ledger, the ledger's freshness and completeness, and parent_limits.
 */
import type { EvalState, Findings } from "../state.js";

export function agreementRevocation(s: EvalState, out: Findings): void {
  const a = s.agreement;
  if (!a) return;
  const id = a.agreement.agreement_id;
  if (a.revocation === "valid" || s.ctx.revocations.isAgreementRevoked(id)) {
    out.add("AGREEMENT_REVOKED", `agreement ${id} is revoked`);
  } else if (a.revocation !== "none") {
    out.add("REVOCATION_UNVERIFIED", `agreement ${id} carries a revocation that does not verify: ${a.revocation.problem}`);
  }
}

export function eventChain(s: EvalState, out: Findings): void {
  const problem = s.agreement?.eventChainProblem;
  if (problem !== undefined) out.add("EVENT_CHAIN_BROKEN", problem);
}

/** A cumulative limit applies somewhere, so the ledger total matters. */
function totalMatters(s: EvalState): boolean {
  const a = s.agreement;
  if (!a) return false;
  return a.parentCumulativeMinor !== undefined || a.mandates.some((m) => m.sliceMinor !== undefined);
}

export function ledgerIntegrity(s: EvalState, out: Findings): void {
  const a = s.agreement;
  if (!a) return;
  if (a.ledger.state === "broken") {
    out.add("LEDGER_CHAIN_BROKEN", a.ledger.problem);
    return;
  }
  if (a.ledger.state === "unknown") {
    if (totalMatters(s)) out.add("LEDGER_TOTAL_UNKNOWN", "the agreement omits its ledger, so the cumulative total is unknown");
    return;
  }
  const seen = s.ctx.ledgerSequence;
  if (seen !== undefined && seen > a.ledgerSequence) {
    out.add("LEDGER_TRUNCATED", `the check carries ledger sequence ${seen} but the ledger holds ${a.ledgerSequence}`);
  }
  const age = s.ctx.now - a.ledgerAsOfMs;
  if (!(age <= s.ctx.policy.ledgerStalenessMs)) {
    const secs = Number.isFinite(age) ? `${Math.floor(age / 1000)} s old` : "of unknown age";
    out.add("LEDGER_STALE", `ledger_as_of is ${secs}; the staleness window is ${Math.floor(s.ctx.policy.ledgerStalenessMs / 1000)} s`);
  }
}

export function parentLimits(s: EvalState, out: Findings): void {
  const problem = s.agreement?.parentLimitsProblem;
  if (problem !== undefined) out.add("PARENT_LIMITS_EXCEEDED", problem);
}
