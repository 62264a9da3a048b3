/**
 * The two statements of the spend transaction (./spend.ts), each sent with its neighbours in
 * ONE simple-protocol query (one round trip), their inputs as escaped literals (a `jsonb`
 * array, one object per spend or per row to write). The queries themselves are the functions
 * `writ_spend_read` and `writ_spend_write` (migrations/0150_spend_batch.sql, which documents
 * them), so Postgres plans them once per connection rather than once per batch.
 *
 * - `lockAndReadSql`: BEGIN, then `writ_spend_read`: the locks of the batch's delegation rows
 *   and agreement rows (each in id order) and, in a query that starts after they are held, one
 *   row per spend with its agreement's head and state, the totals and the stored answers.
 * - `writeAndCommitSql`: `writ_spend_write` (the entries, the heads, the additions to the
 *   intents' totals, the verify answers; it returns the answers stored), then COMMIT.
 */
import type { HashString } from "../../core/canonical/index.js";
import type { LedgerEntry } from "../../core/agreement/index.js";

/** Escapes one value as a literal (the client's `escapeLiteral`). */
export type Literal = (value: string) => string;

/** One spend as `writ_spend_read` takes it (`i`: its place in the batch). */
export interface SpendReadInput {
  i: number;
  agreement_id: string;
  intent_id: string;
  action_id: string;
  currency: string;
  agent_id: string | null;
  /** A parent cumulative maximum applies: read the agreement's total in `currency`. */
  parent: boolean;
  /** The delegation budget's currency, when one applies. */
  dcur: string | null;
}

/** What `writ_spend_read` says of one spend. */
export interface SpendReadRow {
  i: number;
  agreement_found: boolean;
  ledger_sequence: number | null;
  ledger_head: HashString | null;
  status: string | null;
  revoked: boolean;
  delegation_id: string | null;
  intent_currency: string | null;
  delegation_revoked: boolean;
  pushed_revocation: boolean;
  intent_spent: string;
  total_spent: string;
  delegation_spent: string;
  delegation_mixed: boolean;
  existing: LedgerEntry | null;
  released: boolean;
  decided: boolean;
}

/** The rows `writ_spend_write` writes. */
export interface SpendWrites {
  entries: { agreement_id: string; sequence: number; entry: LedgerEntry; action_id: string; intent_id: string; currency: string; amount_minor: string; entry_hash: HashString; prev_entry_hash: HashString | null }[];
  heads: { agreement_id: string; sequence: number; head: HashString }[];
  /** Additions to `agreement_spend`, one per (agreement, intent); `add` in decimal minor units. */
  totals: { agreement_id: string; intent_id: string; currency: string; add: string }[];
  decisions: { agent_id: string; action_id: string; agreement_id: string; request_hash: HashString; decision: Record<string, unknown> }[];
}

const json = (lit: Literal, v: unknown) => `${lit(JSON.stringify(v))}::jsonb`;
const textArray = (lit: Literal, xs: readonly string[]) => `ARRAY[${xs.map(lit).join(",")}]::text[]`;

/** BEGIN and the locked read (its result is the query's last). */
export function lockAndReadSql(lit: Literal, delegationIds: readonly string[], agreementIds: readonly string[], spends: readonly SpendReadInput[]): string {
  return `BEGIN;\nSELECT * FROM writ_spend_read(${textArray(lit, delegationIds)}, ${textArray(lit, agreementIds)}, ${json(lit, spends)})`;
}

/** The writes and COMMIT (the writes' result is the query's first). */
export function writeAndCommitSql(lit: Literal, w: SpendWrites): string {
  return `SELECT * FROM writ_spend_write(${json(lit, w.entries)}, ${json(lit, w.heads)}, ${json(lit, w.totals)}, ${json(lit, w.decisions)});\nCOMMIT`;
}
