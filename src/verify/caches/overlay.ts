/**
 * Fresh ledger totals on a cached prepared agreement, without re-verifying anything.
 *
 * `prepareAgreement` (signatures, acknowledgements, event chain, revocation: ~4 ms) does not
 * depend on the ledger except for the spend per intent, the total, the ledger's state, its
 * sequence and its as-of time. So the cache prepares each record revision ONCE with an empty
 * ledger (`agreementForPreparation`), and every verify copies that object with the totals read
 * from the database at verify time (`withLedgerTotals`). The database is the system of record:
 * the ledger is "ok" and as of the read, unless the record itself breaks the ledger rules
 * (two mandates with one intent_id), which the empty-ledger preparation already found.
 *
 * The overlaid `agreement` carries `ledger_sequence`, `ledger_head` and `ledger_as_of` but no
 * `ledger` array (the entries stay in the database). Pure; the base object is never changed.
 */
import type { IntentAgreement } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import { agreementSpentIn, ledgerCurrencyOf } from "../../core/money/index.js";
import type { PreparedAgreement } from "../../core/evaluate/index.js";
import { formatInstant } from "../../core/time/index.js";
import type { AgreementRecord } from "../../store/index.js";

/** Ledger state and totals read at verify time. */
export interface LedgerTotals {
  ledgerSequence: number;
  ledgerHead: HashString | undefined;
  /** Spent per intent, minor units of each intent's currency. */
  spent: ReadonlyMap<string, bigint>;
  /** When the totals were read, epoch ms. */
  asOfMs: number;
}

/** The record as `prepareAgreement` should see it for the cache: an empty ledger. */
export function agreementForPreparation(record: AgreementRecord): IntentAgreement {
  return { ...record, ledger: [], ledger_sequence: 0, ledger_as_of: formatInstant(0) };
}

/** `base` with `totals` overlaid (see the module comment). */
export function withLedgerTotals(base: PreparedAgreement, totals: LedgerTotals): PreparedAgreement {
  const mandates = base.mandates.map((m) => ({ ...m, spentMinor: totals.spent.get(m.mandate.intent_id) ?? 0n }));
  const { ledger: _ledger, ledger_head: _head, ...record } = base.agreement;
  const total = agreementSpentIn(
    base.mandates.map((m) => m.mandate),
    totals.spent,
    ledgerCurrencyOf(record),
  );
  const agreement: IntentAgreement = {
    ...record,
    ledger_sequence: totals.ledgerSequence,
    ...(totals.ledgerHead !== undefined ? { ledger_head: totals.ledgerHead } : {}),
    ledger_as_of: formatInstant(totals.asOfMs),
  };
  return {
    ...base,
    agreement,
    mandates,
    ledger: base.ledger.state === "broken" ? base.ledger : { state: "ok" },
    ledgerSequence: totals.ledgerSequence,
    ledgerAsOfMs: totals.asOfMs,
    totalSpentMinor: total,
  };
}
