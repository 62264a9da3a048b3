/**
 * Later outcomes of an allowed action (authorized, settled, failed), appended to the
 * agreement's ledger under the same row lock as spends. The moves are those of
 * src/core/agreement/outcomes.ts; a `failed` entry releases the amount from the intent's total
 * in the same transaction, through `releaseSpend` (./holds.ts), the one release function. Who may ask for an outcome is the caller's check (docs/verify.md,
 * "Who records outcomes"); this module only keeps the ledger right. An action of an imported
 * ledger (./import.ts) is not one this service allowed: ACTION_NOT_RECORDED, nothing moves. The new entry repeats the action's amount, currency and intent, and carries
 * `idempotency_key` = action_id; a `failed` entry also takes the spend out of the period windows
 * it was counted in (sql/functions/writ_period_release.sql). Append-only: nothing is updated or deleted.
 */
import { withTransaction } from "../pool.js";
import { moveHeadSql, readHead } from "./head.js";
import type { Pool, PoolClient } from "pg";
import { outcomeStep, type LaterOutcome, type LedgerEntry, type LedgerOutcome } from "../../core/agreement/index.js";
import { RecordStoreError } from "../record-errors.js";
import { nextLedgerEntry } from "./next-entry.js";
import { closeHoldByKeySql } from "./open-holds.js";
import { agentOfAgreement, releaseSpend } from "./holds.js";

/** A later outcome to record. */
export interface OutcomeRequest {
  agreementId: string;
  /** The agreement's agent (its rows' key); without it, the agreement stored under the id (one agent's). */
  agentId?: string;
  actionId: string;
  outcome: LaterOutcome;
  /** RFC 3339 time of the entry. */
  at: string;
}

/** The outcome of `recordOutcome`. */
export type OutcomeResult =
  | { recorded: true; replayed: boolean; entry: LedgerEntry; /** The agreement's agent (whose verify snapshot the caller refreshes). */ agentId: string | null }
  | { recorded: false; code: "AGREEMENT_NOT_FOUND" | "ACTION_NOT_RECORDED" }
  | { recorded: false; code: "OUTCOME_NOT_ALLOWED"; current: LedgerOutcome };

interface EntryRow {
  outcome: LedgerOutcome;
  entry: LedgerEntry;
  intent_id: string;
  amount_minor: string | null;
  imported: boolean;
}

async function run(client: PoolClient, req: OutcomeRequest): Promise<OutcomeResult> {
  // The agreement's agent (a payment party does not name it), then its row locked by its key
  // (docs/scale.md: a Citus worker's rows are locked by key).
  const agentId = req.agentId ?? (await agentOfAgreement(client, req.agreementId));
  const lock =
    agentId === undefined
      ? { rows: [] as { agent_id: string }[] }
      : await client.query<{ agent_id: string }>("SELECT agent_id FROM agreements WHERE agent_id = $2 AND agreement_id = $1 FOR NO KEY UPDATE", [
          req.agreementId,
          agentId,
        ]);
  const locked = lock.rows[0];
  if (!locked) return { recorded: false, code: "AGREEMENT_NOT_FOUND" };
  const head = { ...(await readHead(client, locked.agent_id, req.agreementId)), agent_id: locked.agent_id };
  const { rows } = await client.query<EntryRow>(
    "SELECT outcome, entry, intent_id, amount_minor::text AS amount_minor, imported FROM ledger_entries WHERE agent_id = $3 AND agreement_id = $1 AND action_id = $2 ORDER BY sequence",
    [req.agreementId, req.actionId, locked.agent_id],
  );
  // An imported action (./import.ts) was not allowed by this service: no outcome moves it (a failed would release face-value spend).
  if (rows.some((r) => r.imported)) return { recorded: false, code: "ACTION_NOT_RECORDED" };
  const step = outcomeStep(
    rows.map((r) => r.outcome),
    req.outcome,
  );
  if (step.kind === "refused")
    return step.code === "OUTCOME_NOT_ALLOWED" ? { recorded: false, code: step.code, current: step.current } : { recorded: false, code: step.code };
  if (step.kind === "replay")
    return { recorded: true, replayed: true, entry: (rows.find((r) => r.outcome === req.outcome) as EntryRow).entry, agentId: head.agent_id };

  const last = rows[rows.length - 1] as EntryRow;
  // The amount in force is the latest one an entry of the action carried (the core's rule).
  const carrying = [...rows].reverse().find((r) => r.amount_minor !== null);
  const amount = carrying?.entry.amount;
  const entry = nextLedgerEntry(
    { sequence: head.ledger_sequence, head: head.ledger_head ?? undefined },
    {
      action_id: req.actionId,
      at: req.at,
      currency: last.entry.currency,
      outcome: req.outcome,
      ...(amount !== undefined ? { amount } : {}),
      intent_id: last.intent_id,
      idempotency_key: req.actionId,
    },
  );
  await client.query(
    `WITH ins AS (
       INSERT INTO ledger_entries (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
       VALUES ($11::text, $1::text, $2::int, $3::jsonb, $4::text, $5::text, $6::text, $7::text, $8::bigint, $9::text, $10::text)
       RETURNING sequence
     ),
     closed AS (${closeHoldByKeySql("$11::text", "$1::text", "$4::text", "$5::text", "$3::jsonb")})
     ${moveHeadSql("VALUES ($11::text, $1::text, $2::int, $9::text)")}`,
    [
      req.agreementId,
      entry.sequence,
      JSON.stringify(entry),
      req.actionId,
      req.outcome,
      last.intent_id,
      last.entry.currency,
      carrying?.amount_minor ?? null,
      entry.entry_hash,
      entry.prev_entry_hash ?? null,
      head.agent_id,
    ],
  );
  // A failed releases the amount in force through the one release function (./holds.ts), periods included.
  if (req.outcome === "failed" && carrying?.amount_minor != null) {
    const amountMinor = BigInt(carrying.amount_minor);
    await releaseSpend(client, {
      agentId: head.agent_id,
      agreementId: req.agreementId,
      intentId: last.intent_id,
      actionId: req.actionId,
      amountMinor,
      holdMinor: amountMinor,
    });
  }
  return { recorded: true, replayed: false, entry, agentId: head.agent_id };
}

/** Records a later outcome of an allowed action (see the module comment). Throws SPEND_INVALID for a malformed request. */
export async function recordOutcome(pool: Pool, req: OutcomeRequest): Promise<OutcomeResult> {
  if (!["authorized", "settled", "failed"].includes(req.outcome)) throw new RecordStoreError("SPEND_INVALID", "outcome must be authorized, settled or failed");
  return withTransaction(pool, (client) => run(client, req));
}
