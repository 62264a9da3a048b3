/**
 * The answers of the read API (docs/records.md), shared by its routes and by the portal's lists
 * (src/api/routes/portal/records.ts): a delegation's body, an agreement's body with its
 * remaining budget (src/core/agreement/budget.ts), and the budget line of a delegation alone.
 */
import { budgetView, type BudgetLine, type BudgetView } from "../../../core/agreement/index.js";
import { loadDelegation, spendTotals, type Queryable, delegationSpent, type AgreementView, type DelegationView } from "../../../store/index.js";

/** The answer for one delegation. */
export function delegationBody(d: DelegationView) {
  return {
    delegation_id: d.delegationId,
    agent_id: d.agentId,
    status: d.status,
    revocation: d.revocation,
    parent_delegation_id: d.parentDelegationId,
    agreement_ids: d.agreementIds,
    delegation: d.record,
  };
}

type DelegationBudgetInput = NonNullable<Parameters<typeof budgetView>[0]["delegation"]>;

/** What the budget of delegation `d` (its scope's limits, its agreements' spend) is computed from; undefined without a scope currency. */
async function delegationInput(q: Queryable, d: Pick<DelegationView, "delegationId" | "agentId" | "record">): Promise<DelegationBudgetInput | undefined> {
  const scope = d.record.scope;
  const currency = typeof scope?.currency === "string" ? scope.currency : undefined;
  if (!currency) return undefined;
  return {
    delegationId: d.delegationId,
    currency,
    ...(scope?.maximum_amount !== undefined ? { maximumAmount: scope.maximum_amount } : {}),
    ...(scope?.cumulative_maximum !== undefined ? { cumulativeMaximum: scope.cumulative_maximum } : {}),
    spentMinor: await delegationSpent(q, d.agentId, d.delegationId, currency),
  };
}

/** The budget line of delegation `d` alone (null without a scope currency). */
export async function delegationBudget(q: Queryable, d: DelegationView): Promise<(BudgetLine & { delegation_id: string }) | null> {
  const delegation = await delegationInput(q, d);
  return delegation ? (budgetView({ mandates: [], spent: new Map(), delegation }).delegation ?? null) : null;
}

/** The budget of agreement `a`. */
export async function budgetOf(q: Queryable, a: AgreementView): Promise<BudgetView> {
  const spent = await spendTotals(q, a.agreementId, a.agentId);
  const d = a.delegationId !== null ? await loadDelegation(q, a.delegationId, a.agentId) : undefined;
  const delegation = d ? await delegationInput(q, d) : undefined;
  return budgetView({
    mandates: a.record.mandates,
    ...(a.record.parent_limits ? { parentLimits: a.record.parent_limits } : {}),
    spent,
    ...(delegation ? { delegation } : {}),
  });
}

/** The answer for one agreement, with its budget. */
export async function agreementBody(q: Queryable, a: AgreementView) {
  return {
    agreement_id: a.agreementId,
    agent_id: a.agentId,
    delegation_id: a.delegationId,
    status: a.status,
    revocation: a.revocation,
    ledger_sequence: a.ledgerSequence,
    ...(a.ledgerHead ? { ledger_head: a.ledgerHead } : {}),
    agreement: a.record,
    budget: await budgetOf(q, a),
  };
}
