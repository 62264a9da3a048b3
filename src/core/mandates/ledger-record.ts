/**
 * The agreement record that holds a recorded mandate's spend ledger. Writ writes it from the
 * delegation the mandate became; it carries no principal signature (the verified SD-JWT is the
 * authority), and verify evaluates actions against the delegation alone. Its one intent mirrors
 * the scope, so the ledger's entries and per-intent total are in the scope's currency and the
 * spend transaction re-checks the same bounds under its lock. Pure.
 */
import type { IntentAgreement, Mandate } from "../agreement/index.js";
import type { Delegation } from "../delegation/index.js";

/** The intent id of a recorded mandate's ledger entries. */
export const MANDATE_INTENT_ID = "mandate";

/** An agreement as stored: the record without its ledger fields. */
export type LedgerAgreementRecord = Omit<IntentAgreement, "ledger" | "ledger_sequence" | "ledger_head" | "ledger_as_of">;

/** The ledger-holding agreement of the mandate delegation `d` (same id), created at `createdAt`. */
export function mandateLedgerRecord(d: Delegation, createdAt: string): LedgerAgreementRecord {
  const { scope } = d;
  const intent: Mandate = {
    intent_id: MANDATE_INTENT_ID,
    principal: { type: d.principal.type, id: d.principal.id },
    agent: { ...d.agent },
    purpose: d.purpose,
    currency: scope.currency,
    not_before: d.granted_at,
    expires_at: d.expires_at,
  };
  if (scope.maximum_amount !== undefined) intent.maximum_amount = scope.maximum_amount;
  if (scope.cumulative_maximum !== undefined) intent.cumulative_maximum = scope.cumulative_maximum;
  if (scope.merchants) intent.merchants = [...scope.merchants];
  if (scope.action_types) intent.action_types = [...scope.action_types];
  return { agreement_id: d.delegation_id, status: "active", created_at: createdAt, mandates: [intent], events: [] };
}
