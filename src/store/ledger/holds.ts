/**
 * Hold steps of an allowed action (captured, voided, expired, refunded), appended to the
 * agreement's ledger under the agreement row's lock, as the outcomes of ./outcome.ts. The moves
 * are the core's (src/core/agreement/holds.ts): this module reads the action's entries, asks
 * `holdStep`, appends the entries it names (chained by `nextLedgerEntry`) and gives back what
 * they release through `releaseSpend`, the one release function of every budget: failed
 * (./outcome.ts), void, expiry, the rest of a final capture and a refund that restores budget
 * all release there, in the same transaction as their entry.
 *
 * A refund gives budget back only when the intent's mandate says `refunds_restore_budget: true`
 * and so does every stored delegation the agreement counts under (its own and its chain's);
 * default: never.
 *
 * Idempotent: a capture or refund is keyed by the payment side's `key` (the entry's
 * `idempotency_key`, the row's `step_key`): the same request again answers the entries it
 * appended (`replayed`), another request under the same key is STEP_CONFLICT. A void or expiry
 * of a hold already voided (expired) is a replay. Who may ask is the caller's check (docs/verify.md,
 * "Who records outcomes"); `expired` is the service's own (`expireHolds`).
 *
 * `expireHolds` is the sweep of WRIT_HOLD_EXPIRY_SECONDS: it reads the oldest open holds
 * (ledger_open_holds, kept by the statements writing the entries: ./open-holds.ts) allowed before the cutoff
 * and expires each in its own transaction; several processes may sweep at once: each step takes
 * the agreement row's lock and re-decides from the entries, so a hold is expired at most once
 * (the second sweep finds it closed: a replay, nothing appended).
 */
import type { Pool, PoolClient } from "pg";
import {
  actionState,
  holdStep,
  type HoldOutcome,
  type HoldRequest,
  type LedgerEntry,
  type LedgerOutcome,
  type Mandate,
  type StepEntry,
} from "../../core/agreement/index.js";
import { minorToNumber, toMinor } from "../../core/money/index.js";
import type { Queryable } from "../pool.js";
import { withTransaction } from "../pool.js";
import { moveHeadSql, readHead } from "./head.js";
import { nextLedgerEntry } from "./next-entry.js";
import { closeHoldByKeySql } from "./open-holds.js";

/** A hold step to record; amounts in major units of the action's currency (converted exactly, else AMOUNT_INVALID). */
export type HoldStepInput =
  | { kind: "captured"; key: string; amount: number; final: boolean }
  | { kind: "voided" }
  | { kind: "expired" }
  | { kind: "refunded"; key: string; amount: number };

/** A request to record a hold step. */
export interface HoldStepRequest {
  agreementId: string;
  /** The agreement's agent, when the caller knows it (an id alone may name several agents' agreements). */
  agentId?: string;
  actionId: string;
  step: HoldStepInput;
  /** RFC 3339 time of the entries. */
  at: string;
}

/** The counts of the action after the step, in minor units. */
export interface HoldTotals {
  heldMinor: bigint;
  capturedMinor: bigint;
  refundedMinor: bigint;
  countedMinor: bigint;
  open: boolean;
}

/** The outcome of `recordHoldStep`. */
export type HoldStepResult =
  | { recorded: true; replayed: boolean; entries: LedgerEntry[]; agentId: string | null; totals: HoldTotals; currency: string }
  | { recorded: false; code: "AGREEMENT_NOT_FOUND" | "ACTION_NOT_RECORDED" | "STEP_CONFLICT" }
  | { recorded: false; code: "AMOUNT_INVALID"; currency: string }
  | { recorded: false; code: "OUTCOME_NOT_ALLOWED"; current: LedgerOutcome }
  | { recorded: false; code: "CAPTURE_EXCEEDS_HOLD" | "REFUND_EXCEEDS_CAPTURED"; currency: string; limitMinor: bigint };

interface Row {
  outcome: LedgerOutcome;
  entry: LedgerEntry;
  intent_id: string;
  imported: boolean;
  step_key: string;
}

/**
 * The one release function of the budgets: gives `amountMinor` of the intent's total back
 * (agreement_spend; the delegation and parent totals are sums of it). Every release path
 * calls it, in the transaction of the entry that releases. Budgets added later (period
 * windows) are released here too.
 */
export async function releaseSpend(q: Queryable, r: Release): Promise<void> {
  if (r.amountMinor <= 0n) return;
  await q.query("UPDATE agreement_spend SET spent_minor = spent_minor - $3::bigint WHERE agent_id = $4 AND agreement_id = $1 AND intent_id = $2", [
    r.agreementId,
    r.intentId,
    r.amountMinor.toString(),
    r.agentId,
  ]);
  // The stored ancestors' running totals give it back too (./chain-spend.ts), and the agent's caches hear of it.
  await q.query("SELECT writ_chain_spend_release($1, $2, $3, $4::bigint)", [r.agentId, r.agreementId, r.intentId, r.amountMinor.toString()]);
  // The period windows the ALLOW was counted in give back the same share of what they counted.
  await q.query("SELECT writ_period_release($5::text, $1::text, $2::text, $3::bigint, $4::bigint)", [
    r.agreementId,
    r.actionId,
    r.amountMinor.toString(),
    r.holdMinor.toString(),
    r.agentId,
  ]);
}

/** What `releaseSpend` gives back: `amountMinor` of the action's intent, the action named so a budget that counts by time (its allowed entry's) finds it. */
export interface Release {
  /** The agreement's agent: every row released is read and written by it (docs/scale.md, "Keys"). */
  agentId: string;
  agreementId: string;
  intentId: string;
  actionId: string;
  amountMinor: bigint;
  /** The action's hold (its allowed amount, minor units of the intent's currency): a period window in another currency gives back `amountMinor / holdMinor` of what it counted. */
  holdMinor: bigint;
}

/**
 * `<outcome>/<step_key>` of an entry: the step_key is the request's key (a release: its cause,
 * a colon and the key, so a capture and a refund under one key never collide), '' for voided
 * and expired.
 */
function stepKey(outcome: string, key: string | undefined, cause?: string): string {
  if (key === undefined) return `${outcome}/`;
  return outcome === "released" ? `${outcome}/${String(cause)}:${key}` : `${outcome}/${key}`;
}

const stepOf = (e: LedgerEntry): StepEntry => ({
  outcome: e.outcome,
  amountMinor: e.amount !== undefined ? toMinor(e.amount, e.currency) : undefined,
  ...(e.final === true ? { final: true } : {}),
  ...(e.cause !== undefined ? { cause: e.cause } : {}),
  ...(typeof e.idempotency_key === "string" ? { idempotencyKey: e.idempotency_key } : {}),
});

function toRequest(step: HoldStepInput, currency: string, restore: boolean): HoldRequest | undefined {
  if (step.kind === "voided" || step.kind === "expired") return step;
  let minor: bigint;
  try {
    minor = toMinor(step.amount, currency);
  } catch {
    return undefined;
  }
  if (minor < 0n || (minor === 0n && !(step.kind === "captured" && step.final))) return undefined;
  return step.kind === "captured"
    ? { kind: "captured", key: step.key, amountMinor: minor, final: step.final }
    : { kind: "refunded", key: step.key, amountMinor: minor, restore };
}

/** The agent of agreement `agreementId` (the first by agent id when several hold it), or undefined. */
export async function agentOfAgreement(q: Queryable, agreementId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ agent_id: string }>("SELECT agent_id FROM agreements WHERE agreement_id = $1 ORDER BY agent_id LIMIT 1", [agreementId]);
  return rows[0]?.agent_id;
}

/**
 * Whether every stored delegation the agreement counts under lets refunds restore budget (see
 * `run`): each link read by its key, one statement per link (the links may be other agents', on
 * other workers of a Citus cluster).
 */
async function delegationsRestore(q: Queryable, agentId: string, delegationId: string | null): Promise<boolean> {
  if (delegationId === null) return true;
  const own = await q.query<{ chain_agents: (string | null)[] | null; chain_ids: string[] | null; restore: boolean }>(
    `SELECT chain_agents, chain_ids, coalesce(record->'scope'->'refunds_restore_budget' = 'true'::jsonb, false) AS restore
     FROM delegations WHERE agent_id = $1 AND delegation_id = $2`,
    [agentId, delegationId],
  );
  const d = own.rows[0];
  if (!d) return false;
  let all: boolean | null = d.restore;
  const ids = d.chain_ids ?? [];
  for (let k = 0; k < ids.length; k++) {
    const ag = d.chain_agents?.[k] ?? null;
    if (ag === null) return false;
    const link = await q.query<{ restore: boolean }>(
      "SELECT coalesce(record->'scope'->'refunds_restore_budget' = 'true'::jsonb, false) AS restore FROM delegations WHERE agent_id = $1 AND delegation_id = $2",
      [ag, ids[k]],
    );
    const r = link.rows[0];
    if (r) all = all === null ? r.restore : all && r.restore;
  }
  return all ?? false;
}

async function run(client: PoolClient, req: HoldStepRequest): Promise<HoldStepResult> {
  // delegations_restore: every stored delegation the agreement counts under (its own and the
  // chain above it, each by its key: the chain's links by the agents the delegation stored,
  // chain_agents) lets refunds restore budget; true without a delegation, false when it is not
  // stored or a link's agent is unknown (fail closed: it cannot be read by its key).
  // The agreement's agent (a payment party does not name it), then its row locked by its key:
  // each statement names one agent (docs/scale.md: a Citus worker's rows are locked by key).
  const agentId = req.agentId ?? (await agentOfAgreement(client, req.agreementId));
  const lock =
    agentId === undefined
      ? { rows: [] }
      : await client.query<{ agent_id: string; mandates: Mandate[] | null; delegation_id: string | null }>(
          `SELECT a.agent_id, a.record->'mandates' AS mandates, a.delegation_id
           FROM agreements a WHERE a.agent_id = $2 AND a.agreement_id = $1 FOR NO KEY UPDATE OF a`,
          [req.agreementId, agentId],
        );
  const row = lock.rows[0];
  const locked = row && { ...row, delegations_restore: await delegationsRestore(client, row.agent_id, row.delegation_id) };
  if (!locked) return { recorded: false, code: "AGREEMENT_NOT_FOUND" };
  const { rows } = await client.query<Row>(
    "SELECT outcome, entry, intent_id, imported, step_key FROM ledger_entries WHERE agent_id = $3 AND agreement_id = $1 AND action_id = $2 ORDER BY sequence",
    [req.agreementId, req.actionId, locked.agent_id],
  );
  if (rows.some((r) => r.imported) || !rows.some((r) => r.outcome === "allowed")) return { recorded: false, code: "ACTION_NOT_RECORDED" };
  const first = rows[0] as Row;
  const currency = first.entry.currency;
  const intentId = first.intent_id;
  const { state, problem } = actionState(rows.map((r) => stepOf(r.entry)));
  // The service wrote every entry of this action; one its own rules refuse is a fault, never a move.
  if (problem !== undefined) throw new Error(`ledger of agreement ${req.agreementId}, action ${req.actionId}: ${problem}`);
  const mandate = (locked.mandates ?? []).find((m) => m.intent_id === intentId);
  const request = toRequest(req.step, currency, mandate?.refunds_restore_budget === true && locked.delegations_restore);
  if (!request) return { recorded: false, code: "AMOUNT_INVALID", currency };
  const decision = holdStep(state, request);
  const totals = (): HoldTotals => ({
    heldMinor: state.hold,
    capturedMinor: state.captured,
    refundedMinor: state.refunded,
    countedMinor: state.failed ? 0n : state.hold - state.released,
    open: state.open,
  });
  if (decision.kind === "refused") {
    switch (decision.code) {
      case "OUTCOME_NOT_ALLOWED":
        return { recorded: false, code: decision.code, current: decision.current };
      case "STEP_CONFLICT":
        return { recorded: false, code: decision.code };
      case "CAPTURE_EXCEEDS_HOLD":
        return { recorded: false, code: decision.code, currency, limitMinor: decision.heldMinor - decision.capturedMinor };
      case "REFUND_EXCEEDS_CAPTURED":
        return { recorded: false, code: decision.code, currency, limitMinor: decision.capturedMinor - decision.refundedMinor };
    }
  }
  if (decision.kind === "replay") {
    const keys = new Set([stepKey(decision.outcome, decision.key), stepKey("released", decision.key, decision.outcome === "captured" ? "capture" : "refund")]);
    const entries = rows
      .filter((r) => (r.outcome === decision.outcome || r.outcome === "released") && keys.has(`${r.outcome}/${r.step_key}`))
      .map((r) => r.entry);
    return { recorded: true, replayed: true, entries, agentId: locked.agent_id, totals: totals(), currency };
  }

  const head = await readHead(client, locked.agent_id, req.agreementId);
  let at = { sequence: head.ledger_sequence, head: head.ledger_head ?? undefined };
  const entries: LedgerEntry[] = [];
  for (const s of decision.steps) {
    const entry = nextLedgerEntry(at, {
      action_id: req.actionId,
      at: req.at,
      currency,
      outcome: s.outcome,
      amount: minorToNumber(s.amountMinor, currency),
      intent_id: intentId,
      idempotency_key: s.key ?? req.actionId,
      ...(s.final ? { final: true as const } : {}),
      ...(s.cause ? { cause: s.cause } : {}),
    });
    entries.push(entry);
    at = { sequence: entry.sequence, head: entry.entry_hash };
    await client.query(
      `WITH ins AS (
         INSERT INTO ledger_entries (agent_id, agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash, step_key)
         VALUES ($12::text, $1::text, $2::int, $3::jsonb, $4::text, $5::text, $6::text, $7::text, $8::bigint, $9::text, $10::text, $11::text)
         RETURNING sequence
       ),
       closed AS (${closeHoldByKeySql("$12::text", "$1::text", "$4::text", "$5::text", "$3::jsonb")})
       ${moveHeadSql("VALUES ($12::text, $1::text, $2::int, $9::text)")}`,
      [
        req.agreementId,
        entry.sequence,
        JSON.stringify(entry),
        req.actionId,
        s.outcome,
        intentId,
        currency,
        s.amountMinor.toString(),
        entry.entry_hash,
        entry.prev_entry_hash ?? null,
        stepKey(s.outcome, s.key, s.cause).slice(s.outcome.length + 1),
        locked.agent_id,
      ],
    );
  }
  await releaseSpend(client, {
    agentId: locked.agent_id,
    agreementId: req.agreementId,
    intentId,
    actionId: req.actionId,
    amountMinor: decision.releaseMinor,
    holdMinor: state.hold,
  });
  // The entries must pass the rules every verifier applies (else the transaction rolls back).
  const checked = actionState([...rows.map((r) => stepOf(r.entry)), ...entries.map(stepOf)]);
  if (checked.problem !== undefined) throw new Error(`hold step would break the ledger: ${checked.problem}`);
  const after = checked.state;
  return {
    recorded: true,
    replayed: false,
    entries,
    agentId: locked.agent_id,
    currency,
    totals: {
      heldMinor: after.hold,
      capturedMinor: after.captured,
      refundedMinor: after.refunded,
      countedMinor: after.hold - after.released,
      open: after.open,
    },
  };
}

/** Records a hold step (see the module comment). */
export async function recordHoldStep(pool: Pool, req: HoldStepRequest): Promise<HoldStepResult> {
  return withTransaction(pool, (client) => run(client, req));
}

/** The hold steps' outcome values (for callers that name them). */
export type { HoldOutcome };

/** Options of `expireHolds`. */
export interface ExpireOptions {
  /** Holds allowed before this instant expire. */
  before: Date;
  /** RFC 3339 time of the expiry entries. */
  at: string;
  /** At most this many holds per call (default 100). */
  limit?: number;
}

/** Expires the open holds allowed before `before` (see the module comment); returns the agents whose budgets grew. */
export async function expireHolds(
  pool: Pool,
  o: ExpireOptions,
): Promise<{ expired: number; agents: string[]; holds: { agreementId: string; actionId: string; entry: LedgerEntry }[] }> {
  const { rows } = await pool.query<{ agent_id: string; agreement_id: string; action_id: string }>(
    "SELECT agent_id, agreement_id, action_id FROM ledger_open_holds WHERE held_at < $1 ORDER BY held_at LIMIT $2",
    [o.before, o.limit ?? 100],
  );
  let expired = 0;
  const agents = new Set<string>();
  const holds: { agreementId: string; actionId: string; entry: LedgerEntry }[] = [];
  for (const r of rows) {
    const res = await recordHoldStep(pool, { agreementId: r.agreement_id, actionId: r.action_id, step: { kind: "expired" }, at: o.at });
    if (res.recorded && !res.replayed) {
      expired++;
      if (res.entries[0]) holds.push({ agreementId: r.agreement_id, actionId: r.action_id, entry: res.entries[0] });
      if (res.agentId !== null) agents.add(res.agentId);
    } else {
      // Closed already, or not an action this service can expire (its agreement or entry is gone): not an open hold.
      await pool.query("DELETE FROM ledger_open_holds WHERE agent_id = $3 AND agreement_id = $1 AND action_id = $2", [r.agreement_id, r.action_id, r.agent_id]);
    }
  }
  return { expired, agents: [...agents], holds };
}

/**
 * Held per intent of agent `agentId`'s agreement `agreementId` (minor units): over its open holds (ledger_open_holds), each
 * hold's amount less what was captured of it. The part of the intent's spend not captured yet.
 */
export async function heldTotals(q: Queryable, agentId: string, agreementId: string): Promise<Map<string, bigint>> {
  const { rows } = await q.query<{ intent_id: string; held: string }>(
    `SELECT l.intent_id, sum(CASE WHEN l.outcome = 'captured' THEN -l.amount_minor ELSE l.amount_minor END)::text AS held
     FROM ledger_open_holds h
     JOIN ledger_entries l ON l.agent_id = h.agent_id AND l.agreement_id = h.agreement_id AND l.action_id = h.action_id AND l.outcome IN ('allowed', 'captured')
     WHERE h.agent_id = $2 AND h.agreement_id = $1 GROUP BY l.intent_id`,
    [agreementId, agentId],
  );
  return new Map(rows.map((r) => [r.intent_id, BigInt(r.held)]));
}
