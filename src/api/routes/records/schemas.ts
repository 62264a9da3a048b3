/** JSON Schemas of the read API's answers (docs/records.md). */
const str = { type: "string" } as const;
const nullableStr = { type: ["string", "null"] } as const;
const record = { type: "object", additionalProperties: true } as const;

export const ID_PARAM = { type: "string", minLength: 1, maxLength: 256 } as const;

const revocation = {
  type: ["object", "null"],
  description: "How and when the record was revoked; null while it is not",
  properties: { at: str, reason: nullableStr, by: nullableStr },
} as const;

export const DELEGATION_SCHEMA = {
  type: "object",
  required: ["delegation_id", "agent_id", "status", "revocation", "parent_delegation_id", "agreement_ids", "delegation"],
  properties: {
    delegation_id: str,
    agent_id: str,
    status: { type: "string", description: "active, suspended, revoked or expired, as stored (expiry is enforced at evaluation time)" },
    revocation,
    parent_delegation_id: nullableStr,
    agreement_ids: { type: "array", items: str, description: "Agreements bound to the delegation" },
    delegation: { ...record, description: "The Delegation as declared, without intent_agreement" },
  },
} as const;

/** The period lines of a budget line (src/core/money/periods.ts `periodLine`). */
export const BUDGET_LINE_PERIODS = {
  type: "array",
  description: "Limits per period in force now: each window's limit, spent, remaining and when it resets (what the spend transaction checks)",
  items: {
    type: "object",
    description: "One limit's window in force: spent and count always, the rest as the limit declares",
    properties: {
      period: { type: "string", enum: ["day", "week", "month", "quarter", "year", "total"], description: "Calendar period (week starts Monday), or total" },
      rolling: { type: "string", description: "Rolling window duration (ISO 8601), for example PT24H" },
      time_zone: { type: "string", description: "IANA time zone of the calendar period" },
      window_start: { type: "string", description: "Start of the calendar window in force (RFC 3339)" },
      resets_at: { type: "string", description: "When the window resets (calendar) or its oldest counted spend leaves it (rolling)" },
      limit: { type: "string", description: "Amount limit of the window (decimal string)" },
      spent: { type: "string", description: "Counted spend in the window" },
      remaining: { type: "string", description: "limit - spent, at least 0" },
      count_limit: { type: "integer", description: "At most this many payments in the window" },
      count: { type: "integer", description: "Payments counted in the window" },
      count_remaining: { type: "integer", description: "count_limit - count, at least 0" },
    },
  },
} as const;

const budgetLine = {
  type: "object",
  required: ["currency"],
  properties: {
    currency: str,
    maximum_amount: { type: "string", description: "Per-payment ceiling (decimal string)" },
    limit: { type: "string", description: "Cumulative limit (decimal string)" },
    spent: { type: "string", description: "Counted spend: allowed, authorized or settled, not released" },
    remaining: { type: "string", description: "limit - spent, at least 0" },
    held: { type: "string", description: "Intents: the part of spent on open holds not captured yet (decimal string)" },
    captured: { type: "string", description: "Intents: the part of spent captured or settled: spent - held (decimal string)" },
    periods: BUDGET_LINE_PERIODS,
  },
} as const;

export const BUDGET_SCHEMA = {
  type: "object",
  required: ["intents"],
  description: "What is left to spend, per intent, under the agreement's parent limits and under its delegation",
  properties: {
    intents: { type: "array", items: { ...budgetLine, required: ["intent_id", "currency"], properties: { intent_id: str, ...budgetLine.properties } } },
    agreement: budgetLine,
    delegation: { ...budgetLine, required: ["delegation_id", "currency"], properties: { delegation_id: str, ...budgetLine.properties } },
  },
} as const;

export const AGREEMENT_SCHEMA = {
  type: "object",
  required: ["agreement_id", "agent_id", "delegation_id", "status", "revocation", "ledger_sequence", "agreement", "budget"],
  properties: {
    agreement_id: str,
    agent_id: str,
    delegation_id: nullableStr,
    status: { type: "string", description: "The stored status; revoked when revoked here or by a pushed principal revocation" },
    revocation,
    ledger_sequence: { type: "integer" },
    ledger_head: str,
    agreement: { ...record, description: "The agreement record: mandates, acknowledgements, revocation, events (its ledger: GET .../ledger)" },
    budget: BUDGET_SCHEMA,
  },
} as const;

export const LEDGER_SCHEMA = {
  type: "object",
  required: ["agreement_id", "ledger_sequence", "entries", "next_after", "budget"],
  properties: {
    agreement_id: str,
    ledger_sequence: { type: "integer", description: "Entries in the ledger (send it with a verify as ledger_sequence)" },
    ledger_head: { type: "string", description: "entry_hash of the last entry; absent when the ledger is empty" },
    entries: { type: "array", items: record, description: "The hash-chained entries after `after`, in order" },
    next_after: { type: ["integer", "null"], description: "Pass as `after` for the next page; null on the last page" },
    budget: BUDGET_SCHEMA,
  },
} as const;
