/**
 * The agreement's hash-chained spend ledger.
 *
 * Promises: entries are numbered 1..n; `entry_hash` is SHA-256 of JCS(entry without
 * `entry_hash`), so it covers `prev_entry_hash`, which every entry after the first carries.
 * `ledger_sequence` is the number of entries and `ledger_head` the last `entry_hash` (absent
 * on an empty ledger). Entries carry amounts in their intent's currency; an entry without
 * `intent_id` belongs to the agreement's only mandate. Spend per intent counts, for each
 * `action_id`, only its latest entry of the seed's outcomes: allowed, authorized and settled
 * count their amount, failed releases it; then the hold steps (./holds.ts) subtract what they
 * release (released, voided, expired), and their moves are checked (captures within the hold,
 * refunds within the captures, releases exact). Verifiers never throw.
 */
import { hashWithout, isHashString, type HashString } from "../canonical/index.js";
import { isCurrency, toMinor } from "../money/index.js";
import { AgreementError } from "./errors.js";
import { parseInstant } from "../time/index.js";
import type { IntentAgreement, LedgerEntry, LedgerOutcome, Mandate } from "./types.js";
import { HOLD_OUTCOMES, applyEntry, emptyActionState, type ActionState, type StepEntry } from "./holds.js";

/** The fields a caller supplies for a new entry; sequence and chain fields are computed. */
export type LedgerEntryFields = Omit<LedgerEntry, "sequence" | "entry_hash" | "prev_entry_hash">;

/** Result of checking an agreement's ledger. */
export type LedgerState = { state: "ok" } | { state: "unknown" } | { state: "broken"; problem: string };

const OUTCOMES: ReadonlySet<string> = new Set<LedgerOutcome>(["allowed", "authorized", "settled", "failed", ...HOLD_OUTCOMES]);
const COUNTING: ReadonlySet<string> = new Set<LedgerOutcome>(["allowed", "authorized", "settled"]);

/** An entry as the hold rules read it (./holds.ts); undefined amount when absent or unusable. */
function stepEntry(e: LedgerEntry): StepEntry {
  return {
    outcome: e.outcome,
    amountMinor: e.amount !== undefined ? minorOrUndefined(e.amount, e.currency) : undefined,
    ...(e.final === true ? { final: true } : {}),
    ...(e.cause !== undefined ? { cause: e.cause } : {}),
    ...(typeof e.idempotency_key === "string" ? { idempotencyKey: e.idempotency_key } : {}),
  };
}

function minorOrUndefined(amount: unknown, currency: unknown): bigint | undefined {
  if (typeof amount !== "number" || typeof currency !== "string") return undefined;
  try {
    return toMinor(amount, currency);
  } catch {
    return undefined;
  }
}

function fieldsProblem(f: LedgerEntryFields): string | undefined {
  if (typeof f.action_id !== "string" || f.action_id === "") return "action_id must be a non-empty string";
  if (parseInstant(f.at) === undefined) return "at must be an RFC 3339 date-time";
  if (!isCurrency(f.currency)) return "currency must be an ISO 4217 code";
  if (!OUTCOMES.has(f.outcome)) return `outcome must be one of ${[...OUTCOMES].join(", ")}`;
  if (f.final !== undefined && (f.final !== true || f.outcome !== "captured")) return "final is true on a captured entry, or absent";
  if (f.cause !== undefined && (!["capture", "refund"].includes(f.cause) || f.outcome !== "released"))
    return "cause is capture or refund on a released entry, or absent";
  if (f.amount !== undefined && minorOrUndefined(f.amount, f.currency) === undefined) {
    return `amount ${String(f.amount)} is not usable in ${f.currency}`;
  }
  return undefined;
}

/**
 * The entry that follows `ledger`: sequence n+1, `prev_entry_hash` = the last `entry_hash`
 * (when there is one), `entry_hash` computed. Throws AgreementError (LEDGER_ENTRY_INVALID) for
 * fields that could not be verified later.
 */
export function appendLedgerEntry(ledger: readonly LedgerEntry[], fields: LedgerEntryFields): LedgerEntry {
  return entryAfter(ledger.length, ledger[ledger.length - 1]?.entry_hash, fields);
}

/**
 * As `appendLedgerEntry`, from what a ledger of `length` entries whose last `entry_hash` is
 * `head` (undefined when empty) holds, instead of its entries.
 */
export function entryAfter(length: number, head: HashString | undefined, fields: LedgerEntryFields): LedgerEntry {
  const problem = fieldsProblem(fields);
  if (problem !== undefined) throw new AgreementError("LEDGER_ENTRY_INVALID", `ledger entry: ${problem}`);
  const { sequence: _s, entry_hash: _h, prev_entry_hash: _p, ...rest } = fields as LedgerEntryFields & Partial<LedgerEntry>;
  const draft = { ...rest, sequence: length + 1, ...(head !== undefined ? { prev_entry_hash: head } : {}) };
  return { ...draft, entry_hash: hashWithout(draft as LedgerEntry, "entry_hash") };
}

/** `ledger_sequence` and `ledger_head` for a ledger (head absent when it is empty). */
export function ledgerSummary(ledger: readonly LedgerEntry[]): { ledger_sequence: number; ledger_head?: HashString } {
  const last = ledger[ledger.length - 1];
  return last ? { ledger_sequence: ledger.length, ledger_head: last.entry_hash } : { ledger_sequence: ledger.length };
}

/** The intent an entry belongs to: its `intent_id`, or the only mandate's when it names none (undefined with several). */
export function entryIntent(e: LedgerEntry, mandates: readonly Mandate[]): string | undefined {
  if (e.intent_id !== undefined) return e.intent_id;
  return mandates.length === 1 ? mandates[0]?.intent_id : undefined;
}

/**
 * Appends an entry to an agreement's ledger and returns the new agreement (input unchanged)
 * with `ledger`, `ledger_sequence`, `ledger_head` and (when `asOf` is given) `ledger_as_of`
 * updated. Throws AgreementError: LEDGER_UNKNOWN when the agreement omits its ledger,
 * LEDGER_ENTRY_INVALID when the entry names no live intent or another currency than it.
 */
export function withLedgerEntry(agreement: IntentAgreement, fields: LedgerEntryFields, asOf?: string): { agreement: IntentAgreement; entry: LedgerEntry } {
  const ledger = agreement.ledger;
  if (ledger === undefined) throw new AgreementError("LEDGER_UNKNOWN", "the agreement omits its ledger; refusing to start one");
  const intent = entryIntent(fields as LedgerEntry, agreement.mandates);
  const mandate = agreement.mandates.find((m) => m.intent_id === intent);
  if (!mandate) throw new AgreementError("LEDGER_ENTRY_INVALID", `ledger entry names no live intent (${String(intent)})`);
  if (mandate.currency !== fields.currency) {
    throw new AgreementError("LEDGER_ENTRY_INVALID", `ledger entry is in ${fields.currency} but intent ${mandate.intent_id} is in ${mandate.currency}`);
  }
  const entry = appendLedgerEntry(ledger, fields);
  const next = [...ledger, entry];
  const { ledger_head: _old, ...rest } = agreement;
  return {
    agreement: { ...rest, ledger: next, ...ledgerSummary(next), ...(asOf !== undefined ? { ledger_as_of: asOf } : {}) },
    entry,
  };
}

function recomputes(e: LedgerEntry): boolean {
  try {
    return hashWithout(e, "entry_hash") === e.entry_hash;
  } catch {
    return false;
  }
}

function entryProblem(e: LedgerEntry, i: number, ledger: readonly LedgerEntry[], mandates: readonly Mandate[]): string | undefined {
  if (typeof e !== "object" || e === null || Array.isArray(e)) return `ledger entry ${i} is not an object`;
  if (e.sequence !== i + 1) return `ledger entry ${i} has sequence ${String(e.sequence)}, expected ${i + 1}`;
  if (!isHashString(e.entry_hash) || !recomputes(e)) return `ledger entry ${i}'s entry_hash does not match its content`;
  if (i === 0) {
    if (e.prev_entry_hash !== undefined) return "ledger entry 0 has a prev_entry_hash although it is the first entry";
  } else if (e.prev_entry_hash !== ledger[i - 1]?.entry_hash) {
    return `ledger entry ${i}'s prev_entry_hash does not name entry ${i - 1}'s entry_hash`;
  }
  if (typeof e.action_id !== "string" || e.action_id === "") return `ledger entry ${i} has no action_id`;
  if (parseInstant(e.at) === undefined) return `ledger entry ${i}'s at is not an RFC 3339 date-time`;
  if (!OUTCOMES.has(e.outcome)) return `ledger entry ${i} has an unknown outcome ${JSON.stringify(e.outcome)}`;
  const intent = entryIntent(e, mandates);
  if (intent === undefined) return `ledger entry ${i} names no intent_id and the agreement holds ${mandates.length} intents`;
  const mandate = mandates.find((m) => m.intent_id === intent);
  if (!mandate) return `ledger entry ${i} names intent ${JSON.stringify(intent)}, which is not a live mandate`;
  if (e.currency !== mandate.currency) {
    return `ledger entry ${i} is in ${String(e.currency)} but intent ${JSON.stringify(intent)} is in ${String(mandate.currency)}`;
  }
  if (e.amount !== undefined && minorOrUndefined(e.amount, e.currency) === undefined) {
    return `ledger entry ${i}'s amount ${String(e.amount)} is not usable in ${String(e.currency)}`;
  }
  return undefined;
}

function ledgerProblem(agreement: IntentAgreement, ledger: readonly LedgerEntry[]): string | undefined {
  if (!Array.isArray(ledger)) return "the ledger is not an array";
  const mandates = Array.isArray(agreement.mandates) ? agreement.mandates : [];
  const intents = new Set<string>();
  for (const m of mandates) {
    if (intents.has(m.intent_id)) return `intent ${JSON.stringify(m.intent_id)} appears twice among the mandates, so its spend cannot be attributed`;
    intents.add(m.intent_id);
  }
  const actionIntent = new Map<string, string | undefined>();
  const states = new Map<string, ActionState>();
  for (let i = 0; i < ledger.length; i++) {
    const e = ledger[i] as LedgerEntry;
    const problem = entryProblem(e, i, ledger, mandates);
    if (problem !== undefined) return problem;
    const intent = entryIntent(e, mandates);
    if (actionIntent.has(e.action_id)) {
      if (actionIntent.get(e.action_id) !== intent) return `ledger entry ${i} moves action ${JSON.stringify(e.action_id)} to another intent`;
    } else {
      actionIntent.set(e.action_id, intent);
      if (e.amount === undefined && COUNTING.has(e.outcome)) {
        return `ledger entry ${i} (${e.outcome}) has no amount and no earlier entry of action ${JSON.stringify(e.action_id)}`;
      }
    }
    // The hold rules (./holds.ts) for the hold steps: captures within the hold, refunds within
    // the captures, every release exact. The seed's outcomes keep the seed's rules.
    const state = states.get(e.action_id) ?? emptyActionState();
    states.set(e.action_id, state);
    const stepProblem = applyEntry(state, stepEntry(e));
    if (stepProblem !== undefined) return `ledger entry ${i}: ${stepProblem}`;
  }
  for (const [action, state] of states) {
    if (state.pendingRelease > 0n) return `action ${JSON.stringify(action)}: a final capture is not followed by the release of the rest of the hold`;
  }
  if (agreement.ledger_sequence !== ledger.length) {
    return `ledger_sequence is ${String(agreement.ledger_sequence)} but the ledger holds ${ledger.length} entries`;
  }
  const last = ledger[ledger.length - 1];
  if (!last) {
    if (agreement.ledger_head !== undefined) return "ledger_head is present although the ledger is empty";
  } else if (agreement.ledger_head !== last.entry_hash) {
    return "ledger_head is not the last entry's entry_hash";
  }
  return undefined;
}

/**
 * Checks the agreement's ledger: "unknown" when it is omitted; "broken" with the first
 * problem (sequence not 1..n, a hash or previous hash that does not recompute, a malformed
 * entry, an entry whose currency is not its intent's or that names no live intent,
 * `ledger_sequence` not the entry count, `ledger_head` not the last hash); else "ok".
 */
export function verifyLedger(agreement: IntentAgreement): LedgerState {
  try {
    if (agreement.ledger === undefined) return { state: "unknown" };
    const problem = ledgerProblem(agreement, agreement.ledger);
    return problem === undefined ? { state: "ok" } : { state: "broken", problem };
  } catch {
    return { state: "broken", problem: "the ledger cannot be read" };
  }
}

/** Options of `spentByIntent`. */
export interface SpentOptions {
  /**
   * Whether a latest entry `failed` releases its action's amount (default true, the ledger's
   * own rule). False counts every action at face value, whatever its outcome: what an imported
   * ledger (one the service did not write) may mean, never less than it claims was spent.
   */
  releases?: boolean;
}

/**
 * Spent per intent in minor units of the intent's currency. Every live intent appears (0 when
 * nothing is spent). For each `action_id` only its latest entry counts; an entry without
 * `amount` keeps the amount of the earlier entry of the same action. Meaningful only when
 * `verifyLedger` says "ok": entries it would reject (no intent, unusable amount) count 0.
 */
export function spentByIntent(agreement: IntentAgreement, opts: SpentOptions = {}): Map<string, bigint> {
  const releases = opts.releases ?? true;
  const out = new Map<string, bigint>();
  const mandates = Array.isArray(agreement.mandates) ? agreement.mandates : [];
  for (const m of mandates) out.set(m.intent_id, 0n);
  const ledger = agreement.ledger;
  if (!Array.isArray(ledger)) return out;
  const latest = new Map<string, { intent: string | undefined; minor: bigint; outcome: unknown; released: bigint }>();
  for (const e of ledger) {
    if (typeof e !== "object" || e === null || typeof e.action_id !== "string") continue;
    const prev = latest.get(e.action_id);
    const stepMinor = e.amount !== undefined ? (minorOrUndefined(e.amount, e.currency) ?? 0n) : 0n;
    // A hold step's amount is the step's own: the amount in force (the hold) stays the last one
    // a seed outcome carried, and what a released, voided or expired entry gives back is subtracted.
    if ((HOLD_OUTCOMES as readonly string[]).includes(e.outcome as string)) {
      const released = (prev?.released ?? 0n) + (["released", "voided", "expired"].includes(e.outcome) ? stepMinor : 0n);
      latest.set(e.action_id, { intent: prev?.intent ?? entryIntent(e, mandates), minor: prev?.minor ?? 0n, outcome: prev?.outcome ?? e.outcome, released });
      continue;
    }
    const minor = e.amount !== undefined ? stepMinor : (prev?.minor ?? 0n);
    latest.set(e.action_id, { intent: entryIntent(e, mandates), minor, outcome: e.outcome, released: prev?.released ?? 0n });
  }
  for (const { intent, minor, outcome, released } of latest.values()) {
    if (intent === undefined || typeof outcome !== "string" || !OUTCOMES.has(outcome) || (releases && !COUNTING.has(outcome))) continue;
    const counted = releases ? minor - released : minor;
    out.set(intent, (out.get(intent) ?? 0n) + (counted > 0n ? counted : 0n));
  }
  return out;
}
