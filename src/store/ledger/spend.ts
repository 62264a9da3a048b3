/**
 * The spend transaction of a verified ALLOW: record the action in the agreement's
 * hash-chained ledger, exactly once, without ever exceeding a cumulative budget.
 *
 * Promises of `recordAllowedSpend`:
 * - ONE short transaction: [lock the delegation row, only when a delegation budget applies],
 *   lock the agreement row (`FOR NO KEY UPDATE`, which also returns the ledger head), then ONE
 *   statement that re-reads the totals (a snapshot taken after the lock, so every committed
 *   spend is in it), re-checks every budget, and inserts the entry, moves the head and adds to
 *   the intent's total, all or nothing. Three round trips: BEGIN and the lock(s) as one
 *   simple query, the spend statement (prepared, named), COMMIT.
 * - The spend statement is planned once per connection: the transaction sets
 *   `plan_cache_mode = force_generic_plan` (SET LOCAL). Left to choose, Postgres keeps
 *   re-planning it for every spend (its custom plans, which fold the absent limits away, look
 *   cheaper than the generic one), which cost about a third of the transaction's Postgres CPU
 *   (987 µs per spend before, 686 after, in the (d) loop of bench:verify).
 * - Budgets are compared in integer minor units (bigint): the intent's cumulative slice
 *   against its total, the parent cumulative maximum against the agreement's total in the
 *   entry's currency, the delegation's cumulative maximum against the spend of all the
 *   delegation's agreements in its scope currency (spend in another currency under the
 *   delegation cannot be added without a rate: refused, fail closed).
 * - Idempotent on `actionId`: an action already recorded as allowed returns its entry
 *   (`replayed: true`) and spends nothing, whatever the budgets and revocations say now. A
 *   caller compares `entry.amount`/`intent_id` with its request (or relies on the verify
 *   decision's request hash) to detect a reused action id. An action whose spend was released
 *   since (a `failed` outcome) is neither replayed nor spent again: the result is
 *   `{recorded: false, reason: "ACTION_RELEASED"}` and the caller tells its client to use a new action id
 *   (an ALLOW is never answered for an amount the budget no longer counts). An action that
 *   already has a stored answer (its `decision`'s agent and action) is not spent either
 *   (`ACTION_DECIDED`): a retry of a refused action never writes to the ledger.
 * - Re-checked inside the lock as well: the agreement is stored, active or accepted, not
 *   revoked (also not named by a pushed revocation), the intent is live, and the delegation is
 *   not revoked. Each refusal is a reason code of the evaluation union, which the caller
 *   turns into a DENY.
 * - The entry: `{action_id, at, currency, outcome: "allowed", amount, intent_id,
 *   idempotency_key: action_id}` chained by `nextLedgerEntry` (the core's rule).
 * - The revision of the agreement is NOT bumped (the ledger is versioned by its sequence), so
 *   prepared records stay cached.
 *
 * Lock order: ./index.ts.
 */
import { withTransaction } from "../pool.js";
import type { Pool, PoolClient, QueryResult } from "pg";
import type { LedgerEntry } from "../../core/agreement/index.js";
import type { HashString } from "../../core/canonical/index.js";
import type { ReasonCode } from "../../core/evaluate/index.js";
import { formatMinor, minorToNumber, toMinor, isCurrency } from "../../core/money/index.js";
import { RecordStoreError } from "../record-errors.js";
import { nextLedgerEntry } from "./next-entry.js";
import { SPEND_SQL } from "./spend-sql.js";

/** Cumulative limits to re-check inside the lock (minor units). Absent: that limit does not apply. */
export interface SpendLimits {
  /** The intent's cumulative slice, in the intent's currency. */
  sliceMinor?: bigint;
  /** The agreement's parent cumulative maximum, in the entry's currency. */
  parentCumulativeMinor?: bigint;
  /** The delegation's cumulative maximum; its row is locked first. */
  delegation?: {
    delegationId: string;
    cumulativeMinor: bigint;
    /** The delegation scope's currency. */
    currency: string;
    /** The action's amount in that currency (default `amountMinor`, which must then be in it). */
    amountMinor?: bigint;
  };
}

/** One allowed action to record. */
export interface AllowedSpend {
  agreementId: string;
  intentId: string;
  actionId: string;
  /** Amount in minor units of `currency`, which must be the intent's currency. */
  amountMinor: bigint;
  currency: string;
  /** RFC 3339 time of the entry. */
  at: string;
  limits?: SpendLimits;
  /** The verify answer, stored in `verify_decisions` in the same transaction when the spend is recorded. */
  decision?: { agentId: string; requestHash: HashString; body: Record<string, unknown> };
}

/** Reasons `recordAllowedSpend` refuses for. */
export type SpendRefusal = Extract<
  ReasonCode,
  "CUMULATIVE_BUDGET_EXCEEDED" | "DELEGATION_BUDGET_EXCEEDED" | "AGREEMENT_REVOKED" | "DELEGATION_REVOKED" | "NO_ACTIVE_AGREEMENT" | "INTENT_NOT_FOUND"
>;

/** The outcome of `recordAllowedSpend`. */
export type SpendResult =
  | {
      recorded: true;
      /** True when the action was recorded before: nothing was spent now. */
      replayed: boolean;
      entry: LedgerEntry;
      /** The intent's total after this spend (only when not replayed). */
      intentSpentMinor?: bigint;
      /** The delegation's total after this spend, in its currency (only when not replayed and a delegation budget applied). */
      delegationSpentMinor?: bigint;
      /**
       * True when the spend's `decision` was stored in this transaction (so no other answer for
       * the action exists); false when none was given, another was stored first, or replayed.
       */
      decisionStored?: boolean;
    }
  | { recorded: false; reason: SpendRefusal; message: string }
  /** The action was allowed before and its spend released since (outcome `failed`): never replayed as an ALLOW. */
  | { recorded: false; reason: "ACTION_RELEASED"; message: string; entry: LedgerEntry }
  /** Another answer is already stored for the action (its `decision`): nothing was spent. */
  | { recorded: false; reason: "ACTION_DECIDED"; message: string };

/** Options of `recordAllowedSpend`. */
export interface SpendOptions {
  /** Receives the transaction's duration in seconds (the `writ_ledger_append_seconds` histogram). */
  observe?: (seconds: number) => void;
}

interface LockRow {
  ledger_sequence: number;
  ledger_head: HashString | null;
  status: string;
  revoked: boolean;
  delegation_id: string | null;
  intent_currency: string | null;
}

interface SpendRow {
  outcome: "ok" | "replay" | "released" | "decided" | SpendRefusal;
  intent_spent: string;
  total_spent: string;
  delegation_spent: string;
  delegation_mixed: boolean;
  existing: LedgerEntry | null;
  decision_stored: boolean;
}

function checkInput(s: AllowedSpend): void {
  const bad = (why: string) => new RecordStoreError("SPEND_INVALID", why);
  for (const [k, v] of [["agreementId", s.agreementId], ["intentId", s.intentId], ["actionId", s.actionId]] as const) {
    if (typeof v !== "string" || v.length === 0 || v.length > 256) throw bad(`${k} must be 1 to 256 characters`);
    if (v.includes("\u0000")) throw bad(`${k} must not contain NUL`);
  }
  if (!isCurrency(s.currency)) throw bad("currency must be an ISO 4217 code");
  if (typeof s.amountMinor !== "bigint" || s.amountMinor < 0n) throw bad("amountMinor must be a bigint at or above 0");
  const d = s.limits?.delegation;
  if (d && (typeof d.delegationId !== "string" || d.delegationId.length === 0 || d.delegationId.includes("\u0000"))) throw bad("delegation.delegationId must be a non-empty string without NUL");
  if (d && d.currency !== s.currency && d.amountMinor === undefined) throw bad("a delegation budget in another currency needs delegation.amountMinor");
}

/** The amount as the JSON number the entry carries; refused when a number cannot carry it exactly. */
function entryAmount(minor: bigint, currency: string): number {
  const n = minorToNumber(minor, currency);
  if (toMinor(n, currency) !== minor) throw new RecordStoreError("SPEND_INVALID", `amount ${formatMinor(minor, currency)} ${currency} cannot be carried exactly by a JSON number`);
  return n;
}

function refusalMessage(reason: SpendRefusal, s: AllowedSpend, r: SpendRow | undefined): string {
  const fmt = (v: string | bigint | undefined, ccy: string) => `${formatMinor(BigInt(v ?? 0), ccy)} ${ccy}`;
  switch (reason) {
    case "CUMULATIVE_BUDGET_EXCEEDED":
      return `${fmt(s.amountMinor, s.currency)} on top of ${fmt(r?.intent_spent, s.currency)} spent under intent ${s.intentId} (${fmt(r?.total_spent, s.currency)} under the agreement) exceeds a cumulative budget`;
    case "DELEGATION_BUDGET_EXCEEDED": {
      const d = s.limits?.delegation;
      const ccy = d?.currency ?? s.currency;
      if (r?.delegation_mixed) return `the delegation's spend includes other currencies than ${ccy}, which cannot be added to its cumulative maximum without a rate`;
      return `${fmt(d?.amountMinor ?? s.amountMinor, ccy)} on top of ${fmt(r?.delegation_spent, ccy)} spent under delegation ${d?.delegationId ?? ""} exceeds its cumulative maximum ${fmt(d?.cumulativeMinor, ccy)}`;
    }
    case "AGREEMENT_REVOKED":
      return `agreement ${s.agreementId} is revoked`;
    case "DELEGATION_REVOKED":
      return `the delegation of agreement ${s.agreementId} is revoked`;
    case "NO_ACTIVE_AGREEMENT":
      return `agreement ${s.agreementId} is not stored as active or accepted`;
    case "INTENT_NOT_FOUND":
      return `intent ${s.intentId} is not a live intent of agreement ${s.agreementId}`;
  }
}

/**
 * BEGIN, the generic plan for this transaction, [the delegation row's lock,] the agreement
 * row's lock: ONE simple-protocol query (one round trip). The ids are sent as escaped literals (`escapeLiteral`; checkInput refused NUL),
 * since a simple query takes no parameters. Returns the locked agreement row, or undefined.
 */
async function beginAndLock(client: PoolClient, s: AllowedSpend): Promise<LockRow | undefined> {
  const lit = (v: string) => client.escapeLiteral(v);
  const d = s.limits?.delegation;
  const sql = [
    "BEGIN",
    "SET LOCAL plan_cache_mode = force_generic_plan",
    ...(d ? [`SELECT 1 FROM delegations WHERE delegation_id = ${lit(d.delegationId)} FOR NO KEY UPDATE`] : []),
    `SELECT ledger_sequence, ledger_head, status, revoked_at IS NOT NULL AS revoked, delegation_id,
       (SELECT m->>'currency' FROM jsonb_array_elements(record->'mandates') m WHERE m->>'intent_id' = ${lit(s.intentId)} LIMIT 1) AS intent_currency
     FROM agreements WHERE agreement_id = ${lit(s.agreementId)} FOR NO KEY UPDATE`,
  ].join(";\n");
  const results = (await client.query(sql)) as unknown as QueryResult<LockRow>[];
  return results[results.length - 1]?.rows[0];
}

async function run(client: PoolClient, s: AllowedSpend): Promise<SpendResult> {
  const d = s.limits?.delegation;
  const row = await beginAndLock(client, s);
  if (!row) return { recorded: false, reason: "NO_ACTIVE_AGREEMENT", message: refusalMessage("NO_ACTIVE_AGREEMENT", s, undefined) };
  if (d && row.delegation_id !== d.delegationId) throw new RecordStoreError("SPEND_INVALID", `agreement ${s.agreementId} is not bound to delegation ${d.delegationId}`);
  let blocked: SpendRefusal | null = null;
  if (row.revoked) blocked = "AGREEMENT_REVOKED";
  else if (row.status !== "active" && row.status !== "accepted") blocked = "NO_ACTIVE_AGREEMENT";
  else if (row.intent_currency === null) blocked = "INTENT_NOT_FOUND";
  else if (row.intent_currency !== s.currency) throw new RecordStoreError("SPEND_INVALID", `intent ${s.intentId} is in ${row.intent_currency}, the spend in ${s.currency}`);

  const entry = nextLedgerEntry(
    { sequence: row.ledger_sequence, head: row.ledger_head ?? undefined },
    { action_id: s.actionId, at: s.at, currency: s.currency, outcome: "allowed", amount: entryAmount(s.amountMinor, s.currency), intent_id: s.intentId, idempotency_key: s.actionId },
  );
  const res = await client.query<SpendRow>({ name: "writ_spend_record", text: SPEND_SQL, values: [
    s.agreementId, s.intentId, s.currency, s.actionId, s.amountMinor.toString(), entry.sequence, JSON.stringify(entry), entry.entry_hash,
    entry.prev_entry_hash ?? null, blocked, s.limits?.sliceMinor?.toString() ?? null, s.limits?.parentCumulativeMinor?.toString() ?? null,
    row.delegation_id, d?.cumulativeMinor.toString() ?? null, d?.currency ?? null, (d?.amountMinor ?? s.amountMinor).toString(),
    s.decision?.agentId ?? null, s.decision?.requestHash ?? null, s.decision ? JSON.stringify(s.decision.body) : null,
  ] });
  const r = res.rows[0] as SpendRow;
  if (r.outcome === "replay" && r.existing) return { recorded: true, replayed: true, entry: r.existing };
  if (r.outcome === "decided") return { recorded: false, reason: "ACTION_DECIDED", message: `an answer for action ${s.actionId} is already stored` };
  if (r.outcome === "released" && r.existing) {
    return { recorded: false, reason: "ACTION_RELEASED", message: `action ${s.actionId} was allowed and its spend released (outcome failed); it is never spent again`, entry: r.existing };
  }
  if (r.outcome === "ok") {
    return {
      recorded: true, replayed: false, entry, intentSpentMinor: BigInt(r.intent_spent) + s.amountMinor, decisionStored: r.decision_stored,
      ...(d ? { delegationSpentMinor: BigInt(r.delegation_spent) + (d.amountMinor ?? s.amountMinor) } : {}),
    };
  }
  const reason = r.outcome as SpendRefusal;
  return { recorded: false, reason, message: refusalMessage(reason, s, r) };
}

/** Records one allowed spend (see the module comment). Throws RecordStoreError SPEND_INVALID for a malformed request. */
export async function recordAllowedSpend(pool: Pool, spend: AllowedSpend, opts: SpendOptions = {}): Promise<SpendResult> {
  checkInput(spend);
  const started = process.hrtime.bigint();
  try {
    return await withTransaction(pool, (client) => run(client, spend), { selfBegin: true });
  } finally {
    opts.observe?.(Number(process.hrtime.bigint() - started) / 1e9);
  }
}
