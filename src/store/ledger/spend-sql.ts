/**
 * The two statements of the spend transaction (./spend.ts), each sent with its neighbours in
 * ONE simple-protocol query (one round trip), their inputs as dollar-quoted literals (a
 * `jsonb` array, one object per spend or per entry to write; no escaping to compute). The queries themselves are the functions
 * `writ_spend_read` and `writ_spend_write` (src/store/sql/functions/<name>.sql, which document
 * them), so Postgres plans them once per connection rather than once per batch. They read and
 * write rows; ./spend.ts decides.
 *
 * - `lockAndReadSql`: BEGIN, then `writ_spend_read`: the locks of the batch's delegation rows
 *   and agreement rows (by agent, then id; every row by its key, agent_id first) and, in a query that starts after they are held, one
 *   row per spend with its agreement's head and state, the totals (a delegation's by currency),
 *   the stored answers and the action's entries.
 * - `writeAndCommitSql`: `writ_spend_write` (the entries and their verify answers; it moves
 *   the heads, adds to the intents' totals and returns the answers stored), then COMMIT.
 */
import type { HashString } from "../../core/canonical/index.js";
import type { LedgerEntry } from "../../core/agreement/index.js";

/** One spend as `writ_spend_read` takes it (`i`: its place in the batch). */
export interface SpendReadInput {
  i: number;
  /** The agreement's agent, the key of every per-agent row read (null: none known; nothing is found). */
  ag: string | null;
  /** The delegation whose row (and whose ancestors' rows among p_delegations) the spend locks; null: none. */
  did: string | null;
  agreement_id: string;
  intent_id: string;
  action_id: string;
  currency: string;
  agent_id: string | null;
  /** A parent cumulative maximum applies: read the agreement's total in `currency`. */
  parent: boolean;
  /** A delegation budget applies: read the delegation's spend. */
  del: boolean;
  /** The agreement revision the spend was decided on (`AllowedSpend.revision`), or null. */
  rev: number | null;
}

/** Spend as `writ_spend_read` reads it: [currency, minor units as decimal text] pairs, one per intent total. */
export type SpendPairs = [string, string][];

/**
 * The spend of the agreements bound to delegation `delegationExpr` of agent `agentExpr` (SQL
 * expressions; a delegation's agreements are its agent's, and an id names a record only with
 * its agent: docs/scale.md, "Organization-scoped ids") as SpendPairs, in a scalar subquery:
 * what the budget rule (src/core/money/budget.ts) takes to decide the delegation's spend in
 * its currency.
 */
export function delegationSpendSql(agentExpr: string, delegationExpr: string): string {
  return `(SELECT coalesce(jsonb_agg(jsonb_build_array(s.currency, s.spent_minor::text)), '[]'::jsonb)
    FROM agreements b JOIN agreement_spend s ON s.agent_id = b.agent_id AND s.agreement_id = b.agreement_id
    WHERE b.agent_id = ${agentExpr} AND s.agent_id = ${agentExpr} AND b.delegation_id = ${delegationExpr})`;
}

/** Spend pairs as the budget rule takes them (src/core/money/budget.ts). */
export function spendPairs(pairs: SpendPairs | null | undefined): [string, bigint][] {
  return (pairs ?? []).map(([ccy, v]) => [ccy, BigInt(v)]);
}

/** One stored ancestor of a spend's delegation, as `writ_spend_read` reads it. */
export interface SpendAncestorRow {
  id: string;
  /** Its scope's currency. */
  currency: string;
  /** Its scope's cumulative_maximum as stored (major units), or null. */
  cumulative: unknown;
  revoked: boolean;
  /** Its subtree's spend (absent without a cumulative maximum). */
  spend?: SpendPairs;
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
  /** The delegation's spend (its subtree's once it has descendants); null without a delegation budget. */
  delegation_spend: SpendPairs | null;
  existing: LedgerEntry | null;
  released: boolean;
  decided: boolean;
  /** The request hash stored with the action's allowed entry (null: none stored, e.g. an entry older than migration 0210). */
  existing_request_hash: HashString | null;
  /** Some entry of the action came with the agreement's record (an import): the action_id is spent, never matched. */
  imported: boolean;
  /** The stored chain ids of the agreement's delegation (root first); null without a delegation. */
  delegation_chain: string[] | null;
  /** The stored ancestors (root first) when the delegation has a chain; else null (locked only when the spend declared it). */
  ancestors: SpendAncestorRow[] | null;
  /** The agreement's agent (null: the agreement is not stored). */
  agreement_agent: string | null;
}

/** One decided spend as `writ_spend_write` takes it. */
export interface SpendWriteRow {
  /** The agreement's agent. */
  ag: string;
  /** agreement_id */
  a: string;
  /** The entry, as hashed. */
  e: LedgerEntry;
  /** The amount in minor units, decimal. */
  m: string;
  /** The verify answer to store: agent_id, request hash, body. */
  g?: string;
  h?: HashString;
  d?: Record<string, unknown>;
}

/**
 * `value` as a dollar-quoted literal (no escaping: nothing in it is special), with a tag that
 * does not occur in it. JSON text never holds NUL (JSON.stringify escapes it), nor do ids
 * (refused before).
 */
export function dollarQuoted(value: string): string {
  let tag = "$w$";
  // The closing tag must be the first place the tag occurs after the opening one, so the value
  // may neither hold it nor end with a prefix of it ("…$w" + "$w$" would close early).
  for (let n = 0; (value + tag).indexOf(tag) !== value.length; n++) tag = `$w${n}$`;
  return `${tag}${value}${tag}`;
}

const json = (v: unknown) => `${dollarQuoted(JSON.stringify(v))}::jsonb`;
const textArray = (xs: readonly string[]) => `ARRAY[${xs.map(dollarQuoted).join(",")}]::text[]`;

/** BEGIN and the locked read (its result is the query's last). */
export function lockAndReadSql(delegationIds: readonly string[], agreementIds: readonly string[], spends: readonly SpendReadInput[]): string {
  return `BEGIN;\nSELECT * FROM writ_spend_read(${textArray(delegationIds)}, ${textArray(agreementIds)}, ${json(spends)})`;
}

/** The writes and COMMIT (the writes' result is the query's first); `chain`: the statement raising the stored ancestors' running totals (./chain-spend.ts), when any. */
export function writeAndCommitSql(rows: readonly SpendWriteRow[], periods?: PeriodWrites, chain?: string): string {
  return `SELECT * FROM writ_spend_write(${json(rows)});\n${chain ? `${chain};\n` : ""}${periods && periods.events.length > 0 ? `${periodWriteSql(periods)};\n` : ""}COMMIT`;
}

/** One period window as `writ_period_read` takes it (`k`: its place; `s` a calendar window's start, `since` a rolling window's bound). */
export interface PeriodReadInput {
  k: number;
  /** The owner's agent (the key of its rows). */
  g: string;
  o: string;
  c: string;
  w: string;
  s?: string;
  since?: string;
}

/** What `writ_period_read` says of one window. */
export interface PeriodReadRow {
  k: number;
  spent: string;
  payments: number;
  oldest: Date | string | null;
}

/** One recorded spend and owner as `writ_period_write` takes it. */
export interface PeriodWriteRow {
  /** The owner's agent (the key of its rows): the agreement's, or a stored ancestor's own agent. */
  g: string;
  a: string;
  x: string;
  o: string;
  c: string;
  t: string;
  m: string;
  w: [string, string][];
  /** Until when a window can need the event (the end of its last calendar window or rolling window); null: for good (a `total` window). */
  u: string | null;
  /** Counted in its hour's counter (listed in `w`): its owner has a rolling limit (migrations/0600_period_hour_buckets.sql). */
  b: boolean;
}

/**
 * One window counter a batch raises, as `writ_period_write` takes it: the batch's spends in the
 * window summed (`m`, minor units; `n` payments); `e` when the read found the counter (it is
 * then raised in place; else inserted).
 */
export interface PeriodCounterRow {
  /** The owner's agent (the key of its rows). */
  g: string;
  o: string;
  c: string;
  /** Window kind and start. */
  w: string;
  s: string;
  m: string;
  n: number;
  e: boolean;
}

/** A batch's period writes: one event per recorded spend and owner, one row per window counter raised. */
export interface PeriodWrites {
  events: PeriodWriteRow[];
  counters: PeriodCounterRow[];
}

/** The period read, sent after `lockAndReadSql` in the same round trip (its result is the query's last). */
export function periodReadSql(windows: readonly PeriodReadInput[]): string {
  return `SELECT * FROM writ_period_read(${json(windows)})`;
}

/** The period writes, sent between `writ_spend_write` and COMMIT. */
export function periodWriteSql(w: PeriodWrites): string {
  return `SELECT writ_period_write(${json(w.events)}, ${json(w.counters)})`;
}
