/**
 * The ledger head of an agreement (`agreements.ledger_sequence`, `agreements.ledger_head`):
 * the one statement that moves it outside the spend and outcome statements (which move it in
 * the same statement as their insert, ./spend-sql.ts and ./outcome.ts).
 */
import type { HashString } from "../../core/canonical/index.js";
import type { Queryable } from "../pool.js";

/** Moves `agreementId`'s head to `sequence` / `head` (the caller holds the row lock). */
export async function moveHead(q: Queryable, agreementId: string, sequence: number, head: HashString | null): Promise<void> {
  await q.query("UPDATE agreements SET ledger_sequence = $2, ledger_head = $3, updated_at = now() WHERE agreement_id = $1", [agreementId, sequence, head]);
}
