/**
 * Rows of the spend ledger (`ledger_entries`) and the per-intent totals (`agreement_spend`)
 * of migrations/0060_agreements.sql.
 *
 * Promise: an entry is stored exactly as hashed (`entry` jsonb; JCS re-hashes it to its
 * `entry_hash`), with copies of the fields queries need: its resolved intent, currency and
 * amount in minor units. Entries are only ever inserted, never updated or deleted. Callers
 * hold the agreement row lock (`FOR NO KEY UPDATE`) while they insert, so sequences stay
 * gapless and each entry names the previous head.
 */
import type { HashString } from "../../core/canonical/index.js";
import { entryIntent, spentByIntent, type IntentAgreement, type LedgerEntry, type Mandate, type SpentOptions } from "../../core/agreement/index.js";
import { toMinor } from "../../core/money/index.js";
import type { Queryable } from "../pool.js";
import { RecordStoreError } from "../record-errors.js";
import { moveChainSpend } from "./chain-spend.js";
import { CLOSING_OUTCOMES, closeHoldCte } from "./open-holds.js";

/** The columns of one `ledger_entries` row, as computed from an entry. */
export interface LedgerRow {
  sequence: number;
  entry: LedgerEntry;
  action_id: string;
  outcome: LedgerEntry["outcome"];
  intent_id: string;
  currency: string;
  /** Decimal text of the amount in minor units; null when the entry carries no amount. */
  amount_minor: string | null;
  entry_hash: HashString;
  prev_entry_hash: HashString | null;
  /** The hold step's key (migrations/0400_holds.sql): a capture's or refund's idempotency_key, a release's `<cause>:<key>`; '' otherwise. */
  step_key: string;
}

/** The `step_key` column of an entry (see LedgerRow). */
function stepKeyOf(e: LedgerEntry): string {
  const key = typeof e.idempotency_key === "string" ? e.idempotency_key : "";
  if (e.outcome === "captured" || e.outcome === "refunded") return key;
  if (e.outcome === "released") return `${String(e.cause)}:${key}`;
  return "";
}

/** The row of `entry`, its intent resolved against `mandates`. Throws LEDGER_INVALID when it names none. */
export function ledgerRow(entry: LedgerEntry, mandates: readonly Mandate[]): LedgerRow {
  const intent = entryIntent(entry, mandates);
  if (intent === undefined) throw new RecordStoreError("LEDGER_INVALID", `ledger entry ${entry.sequence} names no intent`);
  return {
    sequence: entry.sequence,
    entry,
    action_id: entry.action_id,
    outcome: entry.outcome,
    intent_id: intent,
    currency: entry.currency,
    amount_minor: entry.amount === undefined ? null : toMinor(entry.amount, entry.currency).toString(),
    entry_hash: entry.entry_hash,
    prev_entry_hash: entry.prev_entry_hash ?? null,
    step_key: stepKeyOf(entry),
  };
}

/**
 * Inserts rows of `agreementId` in one statement (`imported`: they came with the record,
 * ./import.ts). A second entry for the same (action, outcome) raises LEDGER_CONFLICT. The
 * caller updates the head and the totals.
 */
export async function insertLedgerRows(
  q: Queryable,
  agentId: string,
  agreementId: string,
  rows: readonly LedgerRow[],
  opts: { imported: boolean },
): Promise<void> {
  if (rows.length === 0) return;
  try {
    await q.query(
      `WITH ins AS (
         INSERT INTO ledger_entries (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, imported, step_key)
         SELECT $4, $1, r.sequence, r.entry, r.action_id, r.outcome, r.intent_id, r.currency, r.amount_minor::bigint, r.entry_hash, r.prev_entry_hash, $3::boolean, r.step_key
         FROM jsonb_to_recordset($2::jsonb) AS r(sequence int, entry jsonb, action_id text, outcome text, intent_id text,
                                                 currency text, amount_minor text, entry_hash text, prev_entry_hash text, step_key text)
         RETURNING agent_id, agreement_id, action_id, outcome, entry, imported
       ),
       ${closeHoldCte("closed", "SELECT agent_id, agreement_id, action_id, outcome, entry FROM ins")},
       opened AS (
         INSERT INTO ledger_open_holds (agent_id, agreement_id, action_id, held_at)
         SELECT o.agent_id, o.agreement_id, o.action_id, now() FROM ins o WHERE o.outcome = 'allowed' AND NOT o.imported
           AND NOT EXISTS (SELECT 1 FROM ins c WHERE c.action_id = o.action_id
                             AND (c.outcome IN (${CLOSING_OUTCOMES.map((x) => `'${x}'`).join(", ")}) OR (c.outcome = 'captured' AND c.entry ? 'final')))
         ON CONFLICT DO NOTHING)
       SELECT 1`,
      [agreementId, JSON.stringify(rows), opts.imported, agentId],
    );
  } catch (e) {
    if ((e as { code?: unknown }).code === "23505") {
      throw new RecordStoreError("LEDGER_CONFLICT", "the ledger records an (action, outcome) pair twice or reuses a sequence");
    }
    throw e;
  }
}

/** The stored `entry_hash` at `sequence` of `agreementId`, or undefined. */
export async function ledgerHashAt(q: Queryable, agentId: string, agreementId: string, sequence: number): Promise<HashString | undefined> {
  const { rows } = await q.query<{ entry_hash: HashString }>(
    "SELECT entry_hash FROM ledger_entries WHERE agent_id = $3 AND agreement_id = $1 AND sequence = $2",
    [agreementId, sequence, agentId],
  );
  return rows[0]?.entry_hash;
}

/**
 * Writes the per-intent totals of `agreement` from its full ledger with the core's rule
 * (`spentByIntent`, with `opts`). Used when a ledger is imported with a new record
 * (./import.ts); the spend path maintains the totals incrementally instead.
 */
export async function writeSpendTotals(q: Queryable, agentId: string, agreement: IntentAgreement, opts: SpentOptions = {}): Promise<void> {
  const spent = spentByIntent(agreement, opts);
  const rows = agreement.mandates.map((m) => ({ intent_id: m.intent_id, currency: m.currency, spent_minor: (spent.get(m.intent_id) ?? 0n).toString() }));
  // The stored ancestors' running totals follow the new totals (./chain-spend.ts).
  await moveChainSpend(q, agentId, { agreementId: agreement.agreement_id }, -1);
  await q.query(
    `INSERT INTO agreement_spend (agent_id, agreement_id, intent_id, currency, spent_minor)
     SELECT $3, $1, r.intent_id, r.currency, r.spent_minor::bigint
     FROM jsonb_to_recordset($2::jsonb) AS r(intent_id text, currency text, spent_minor text)
     ON CONFLICT (agent_id, agreement_id, intent_id) DO UPDATE SET currency = EXCLUDED.currency, spent_minor = EXCLUDED.spent_minor`,
    [agreement.agreement_id, JSON.stringify(rows), agentId],
  );
  await moveChainSpend(q, agentId, { agreementId: agreement.agreement_id }, 1);
}

/** Spent per intent of `agreementId` (minor units of each intent's currency); of agent `agentId`'s agreement when given. */
export async function spendTotals(q: Queryable, agreementId: string, agentId?: string): Promise<Map<string, bigint>> {
  const { rows } = await q.query<{ intent_id: string; spent_minor: string }>(
    "SELECT intent_id, spent_minor::text AS spent_minor FROM agreement_spend WHERE agreement_id = $1 AND ($2::text IS NULL OR agent_id = $2)",
    [agreementId, agentId ?? null],
  );
  return new Map(rows.map((r) => [r.intent_id, BigInt(r.spent_minor)]));
}
