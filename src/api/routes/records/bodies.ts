/**
 * The answers of the read API (docs/records.md), shared by its routes and by the portal's lists
 * (src/api/routes/portal/records.ts): a delegation's body, an agreement's body with its
 * remaining budget (src/core/agreement/budget.ts), and the budget line of a delegation alone.
 */
import { budgetView, type BudgetLine, type BudgetView } from "../../../core/agreement/index.js";
import { formatMinor, mandatePeriods, periodLine, preparePeriods, type PeriodLine, type PreparedPeriods } from "../../../core/money/index.js";
import {
  heldTotals,
  loadDelegation,
  ownerKey,
  readPeriodUsage,
  spendTotals,
  type Queryable,
  delegationSpent,
  type AgreementView,
  type DelegationView,
} from "../../../store/index.js";

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

/** `fn` or undefined when it throws (period limits that are not usable show no lines; verify refuses them). */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** The period lines of owners at instant `nowMs`, read from the same counters the spend transaction checks. */
async function periodLines(
  q: Queryable,
  owners: readonly { id: string; agentId: string; owner: string; currency: string; periods: PreparedPeriods | undefined }[],
  nowMs: number,
): Promise<Map<string, PeriodLine[]>> {
  const specs = owners.flatMap((o) =>
    o.periods ? [{ id: o.id, agentId: o.agentId, owner: o.owner, currency: o.currency, periods: o.periods, atMs: nowMs }] : [],
  );
  const out = new Map<string, PeriodLine[]>();
  if (specs.length === 0) return out;
  const usage = await readPeriodUsage(q, specs);
  for (const s of specs) {
    out.set(
      s.id,
      s.periods.limits.map((l) => periodLine(l, s.periods.timeZone, nowMs, usage(l, s), (v) => formatMinor(v, s.currency))),
    );
  }
  return out;
}

/** The budget line of delegation `d` alone (null without a scope currency), its period lines at `nowMs`. */
export async function delegationBudget(q: Queryable, d: DelegationView, nowMs = Date.now()): Promise<(BudgetLine & { delegation_id: string }) | null> {
  const delegation = await delegationInput(q, d);
  if (!delegation) return null;
  const periods = await delegationPeriodLines(q, d, delegation.currency, nowMs);
  return (
    budgetView({ mandates: [], spent: new Map(), delegation, periods: { intents: new Map(), ...(periods ? { delegation: periods } : {}) } }).delegation ?? null
  );
}

async function delegationPeriodLines(
  q: Queryable,
  d: Pick<DelegationView, "agentId" | "delegationId" | "record">,
  currency: string,
  nowMs: number,
): Promise<PeriodLine[] | undefined> {
  const scope = d.record.scope;
  const periods = attempt(() => preparePeriods(scope?.period_limits, scope?.time_zone, currency));
  const lines = await periodLines(
    q,
    [{ id: "d", agentId: d.agentId, owner: ownerKey(d.agentId, "", "", { owner: "delegation", delegationId: d.delegationId }), currency, periods }],
    nowMs,
  );
  return lines.get("d");
}

/** The budget of agreement `a`, its period windows those in force at `nowMs` (the service clock). */
export async function budgetOf(q: Queryable, a: AgreementView, nowMs = Date.now()): Promise<BudgetView> {
  const spent = await spendTotals(q, a.agreementId, a.agentId);
  const held = await heldTotals(q, a.agentId, a.agreementId);
  const d = a.delegationId !== null ? await loadDelegation(q, a.delegationId, a.agentId) : undefined;
  const delegation = d ? await delegationInput(q, d) : undefined;
  const intents = await periodLines(
    q,
    a.record.mandates.map((m) => ({
      id: m.intent_id,
      agentId: a.agentId,
      owner: ownerKey(a.agentId, a.agreementId, m.intent_id, { owner: "intent" }),
      currency: m.currency,
      periods: attempt(() => mandatePeriods(m)),
    })),
    nowMs,
  );
  const delegationPeriods = d && delegation ? await delegationPeriodLines(q, d, delegation.currency, nowMs) : undefined;
  return budgetView({
    mandates: a.record.mandates,
    ...(a.record.parent_limits ? { parentLimits: a.record.parent_limits } : {}),
    spent,
    held,
    ...(delegation ? { delegation } : {}),
    periods: { intents, ...(delegationPeriods ? { delegation: delegationPeriods } : {}) },
  });
}

/** The answer for one agreement, with its budget. */
export async function agreementBody(q: Queryable, a: AgreementView, nowMs = Date.now()) {
  return {
    agreement_id: a.agreementId,
    agent_id: a.agentId,
    delegation_id: a.delegationId,
    status: a.status,
    revocation: a.revocation,
    ledger_sequence: a.ledgerSequence,
    ...(a.ledgerHead ? { ledger_head: a.ledgerHead } : {}),
    agreement: a.record,
    budget: await budgetOf(q, a, nowMs),
  };
}
