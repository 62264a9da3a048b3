/**
 * The ledger repository: the ONE owner of an agreement's spend ledger in Postgres. Every write
 * of `ledger_entries`, of the ledger head (`agreement_ledger_heads`, ./head.ts) and of
 * the spent totals (`agreement_spend`) is made here, by one of three paths:
 *
 * - a spend (./spend.ts, `recordAllowedSpends`): verified ALLOWs, several in one transaction
 *   (group commit), each re-checked against every budget under the locks below, recorded with
 *   its verify answer;
 * - an outcome (./outcome.ts, `recordOutcome`): `authorized`, `settled` or `failed` of an
 *   allowed action; `failed` releases its amount;
 * - an import (./import.ts, `importLedger`): a ledger that arrives with the record that
 *   creates an agreement, stored as `imported` history counted at face value. A declaration
 *   never writes to the ledger of an agreement the service holds (`declaredLedgerIgnored`).
 *
 * Entries are only ever inserted, never updated or deleted; each names the previous head
 * (./next-entry.ts computes it, the core's chain rule).
 *
 * Lock order (every writer of these tables takes its locks in this order, so none deadlocks
 * another; src/store/locks.ts numbers the advisory locks):
 *
 *   1. the delegation-tree advisory lock (`LOCK_IDS.delegationTree`: shared by delegation
 *      upserts, exclusive for revocations), when taken;
 *   2. delegation rows (`FOR NO KEY UPDATE`), ancestors before descendants: ordered by depth
 *      (the length of the row's `chain_ids`), then id, in every transaction that locks more
 *      than one. A spend locks its delegation's row when a delegation budget applies, and,
 *      when the delegation has a chain, every ancestor's row ROOT FIRST, THEN the child's
 *      (its budget is re-checked against every stored ancestor's in the same transaction as
 *      the child's ledger entry); a batch of spends locks all of its delegations' rows in
 *      that one order (depth, id), so batches never deadlock one another. A delegation upsert
 *      that marks ancestors (`has_descendants`) locks them in the same order before its own
 *      row. A revocation locks its subtree's rows as its UPDATE meets them; should that meet
 *      a spend batch the other way, Postgres ends one of the two with a deadlock error and
 *      the batch is retried in halves;
 *   3. agreement rows (`FOR NO KEY UPDATE`): one per transaction on the outcome path; a
 *      batch of spends locks all of its agreements' rows by agent (agents in id order, one
 *      statement each; on a Citus cluster by shard group first, in shard id order, as a
 *      worker reads a group's agents in one call: sql/functions/writ_spend_read_agent.sql),
 *      each agent's in id order, so two batches (of any processes) never deadlock;
 *   4. then the writes: `ledger_entries`, the head, `agreement_spend`, and `verify_decisions`
 *      (a spend stores its answer last, in the same statement).
 *
 * Row locks are `FOR NO KEY UPDATE`, which does not conflict with the KEY SHARE locks of
 * foreign-key checks. The budget re-check reads the totals in a statement that starts after
 * the agreement row's lock is held, so it sees every spend and release committed before.
 */
export { declaredLedgerIgnored, importLedger } from "./import.js";
export { nextLedgerEntry, type LedgerState } from "./next-entry.js";
export { recordOutcome, type OutcomeRequest, type OutcomeResult } from "./outcome.js";
export {
  expireHolds,
  heldTotals,
  recordHoldStep,
  releaseSpend,
  type ExpireOptions,
  type HoldStepInput,
  type HoldStepRequest,
  type HoldStepResult,
  type HoldTotals,
  type Release,
} from "./holds.js";
export { allowedActionOf, ledgerPage, type AllowedAction } from "./reads.js";
export { ledgerRow, spendTotals, type LedgerRow } from "./rows.js";
export { HOUR_COUNTERS_FROM, ownerKey, readPeriodUsage, type SpendPeriods } from "./periods.js";
export {
  recordAllowedSpend,
  recordAllowedSpends,
  type SpendBatchResult,
  type AllowedSpend,
  type SpendLimits,
  type SpendOptions,
  type SpendRefusal,
  type SpendResult,
} from "./spend.js";
