/**
 * The running totals of stored ancestors (`delegation_spend`, migrations/0540_delegation_spend.sql;
 * docs/scale.md, "A delegation chain across agents"): each stored ancestor keeps, on its own
 * row key (its own shard on a Citus cluster), the spend of the agreements below it, so the
 * spend transaction of a child reads and raises it under the ancestor's row lock instead of
 * summing the descendants' totals on every shard. Every change of an `agreement_spend` total
 * under a stored chain changes them in the same transaction:
 * - a spend raises them (./spend.ts, `chainSpendSql` in the write round trip: only for spends
 *   whose delegation has a stored link, so a spend without a chain pays nothing);
 * - a release lowers them (./holds.ts, `releaseSpend`);
 * - an import, an agreement bound to another delegation, a delegation whose stored chain
 *   changes move their agreements' totals out before and back in after (`moveChainSpend`).
 */
import type { Queryable } from "../pool.js";
import { dollarQuoted } from "./spend-sql.js";

/** One change of an agreement's total as `writ_chain_spend_add` takes it. */
export interface ChainSpendRow {
  /** The agreement's agent. */
  ag: string;
  /** agreement_id */
  a: string;
  /** The currency (or `i`, the intent whose stored total's currency is taken). */
  c?: string;
  i?: string;
  /** Minor units, decimal; negative gives budget back. */
  m: string;
}

/** The statement that adds `rows` to their stored ancestors' totals (for a multi-statement query). */
export function chainSpendSql(rows: readonly ChainSpendRow[]): string {
  return `SELECT writ_chain_spend_add(${dollarQuoted(JSON.stringify(rows))}::jsonb)`;
}

/**
 * Moves the totals of agent `agentId`'s agreement `on.agreementId`, or of every agreement bound
 * to its delegation `on.delegationId` (their rows locked first), out of (`sign` -1) or into (+1)
 * their stored ancestors' totals: -1 before what is above them changes, +1 after, in one
 * transaction.
 */
export async function moveChainSpend(q: Queryable, agentId: string, on: { agreementId: string } | { delegationId: string }, sign: 1 | -1): Promise<void> {
  await q.query("SELECT writ_chain_spend_move($1, $2, $3, $4)", [
    agentId,
    "delegationId" in on ? on.delegationId : null,
    "agreementId" in on ? on.agreementId : null,
    sign,
  ]);
}
