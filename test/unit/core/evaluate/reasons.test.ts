/**
 * Every reason code of the engine: one case that makes it fire and one that clears it, each
 * built from the same realistic, signed records (test/fixtures/records.ts).
 */
import { describe, expect, it } from "vitest";
import {
  amendMandate,
  mandateHash,
  prepareAgreement,
  signAcknowledgement,
  signRevocation,
  type IntentAgreement,
  type Mandate,
} from "../../../../src/core/agreement/index.js";
import { prepareDelegation, type Condition, type Delegation } from "../../../../src/core/delegation/index.js";
import { REASONS, REASON_CODES, evaluate, type Action, type Decision, type EvalContext, type ReasonCode } from "../../../../src/core/evaluate/index.js";
import { parseRate } from "../../../../src/core/money/index.js";
import * as F from "../../../fixtures/records.js";

interface Mods {
  mandates?: (ms: Mandate[]) => Mandate[];
  agreement?: (a: IntentAgreement) => IntentAgreement | Promise<IntentAgreement>;
  delegation?: (d: Delegation) => Delegation;
  action?: Partial<Action>;
  ctx?: Partial<EvalContext>;
  signer?: typeof F.principalKey;
}

const clone = <T>(x: T): T => structuredClone(x);

async function run(m: Mods = {}): Promise<Decision> {
  const base = await F.agreement({
    ledgerEntries: 20,
    mandates: m.mandates ? m.mandates(F.mandates()) : F.mandates(),
    ...(m.signer ? { signer: m.signer } : {}),
  });
  const a = m.agreement ? await m.agreement(clone(base)) : base;
  const d = m.delegation ? m.delegation(clone(F.delegation(a))) : F.delegation(a);
  const pa = await prepareAgreement(a, { now: F.T0 });
  return evaluate(prepareDelegation(d), pa, F.action({ intent_id: "groceries", ...m.action }), F.context(m.ctx));
}

const onGroceries = (f: (m: Mandate) => Mandate) => (ms: Mandate[]) => ms.map((m) => (m.intent_id === "groceries" ? f(m) : m));
const revoked = (ids: string[]) => ({ isDelegationRevoked: (id: string) => ids.includes(id), isAgreementRevoked: (id: string) => ids.includes(id) });
const withCondition = (c: Condition) => (d: Delegation) => ({ ...d, conditions: [...d.conditions, c] });
const link = (i: number, f: (l: Delegation["delegation_chain"][number]) => void) => (d: Delegation) => {
  const l = d.delegation_chain[i];
  if (l) f(l);
  return d;
};

type Case = { fire: Mods; clear: Mods };
const CASES: Partial<Record<ReasonCode, Case>> = {
  AMOUNT_ABOVE_INTENT_CEILING: { fire: { action: { amount: 200.01 } }, clear: { action: { amount: 200 } } },
  AMOUNT_ABOVE_DELEGATION_CEILING: {
    fire: { delegation: (d) => ({ ...d, scope: { ...d.scope, maximum_amount: 40 } }) },
    clear: { delegation: (d) => ({ ...d, scope: { ...d.scope, maximum_amount: 40 } }), action: { amount: 40 } },
  },
  AMOUNT_INVALID: { fire: { action: { amount: 12.345 } }, clear: { action: { amount: 12.34 } } },
  CUMULATIVE_BUDGET_EXCEEDED: {
    // groceries has 7 of the 20 ledger spends of 5.00: 35.00 spent.
    fire: { mandates: onGroceries((m) => ({ ...m, cumulative_maximum: 60 })), action: { amount: 25.01 } },
    clear: { mandates: onGroceries((m) => ({ ...m, cumulative_maximum: 60 })), action: { amount: 25 } },
  },
  DELEGATION_BUDGET_EXCEEDED: {
    // 100.00 spent under the agreement.
    fire: { delegation: (d) => ({ ...d, scope: { ...d.scope, cumulative_maximum: 120 } }), action: { amount: 20.01 } },
    clear: { delegation: (d) => ({ ...d, scope: { ...d.scope, cumulative_maximum: 120 } }), action: { amount: 20 } },
  },
  PERIOD_LIMIT_EXCEEDED: {
    // Fired by the evaluator when the period limits cannot be read (fail closed); over a window, by the spend transaction.
    fire: { mandates: onGroceries((m) => ({ ...m, time_zone: "Mars/Olympus", period_limits: [{ period: "day", amount: 50 }] })) },
    clear: { mandates: onGroceries((m) => ({ ...m, time_zone: "Europe/Berlin", period_limits: [{ period: "day", amount: 50 }] })) },
  },
  PARENT_LIMITS_EXCEEDED: {
    fire: { agreement: (a) => ({ ...a, parent_limits: { currency: "USD", maximum_amount: 1000, cumulative_maximum: 5999 } }) },
    clear: { agreement: (a) => ({ ...a, parent_limits: { currency: "USD", maximum_amount: 1000, cumulative_maximum: 6000 } }) },
  },
  CURRENCY_MISMATCH: {
    fire: { action: { currency: "EUR", amount: 10 } },
    clear: { action: { currency: "EUR", amount: 10 }, ctx: { rate: (f, t) => (f === "EUR" && t === "USD" ? parseRate("1.0842") : undefined) } },
  },
  OVER_BROAD_INTENT: {
    fire: { mandates: onGroceries(({ expires_at: _e, ...m }) => m) },
    clear: {},
  },
  INTENT_NOT_FOUND: { fire: { action: { intent_id: "yachts" } }, clear: { action: { intent_id: "groceries" } } },
  INTENT_NOT_BOUND: {
    fire: { delegation: (d) => ({ ...d, scope: { ...d.scope, intents: ["travel"] } }) },
    clear: { delegation: (d) => ({ ...d, scope: { ...d.scope, intents: ["travel", "groceries"] } }) },
  },
  INTENT_EXPIRED: {
    fire: { mandates: onGroceries((m) => ({ ...m, expires_at: F.iso(F.T0) })) },
    clear: { mandates: onGroceries((m) => ({ ...m, expires_at: F.iso(F.T0 + 1) })) },
  },
  INTENT_NOT_YET_VALID: {
    fire: { mandates: onGroceries((m) => ({ ...m, not_before: F.iso(F.T0 + 1000) })) },
    clear: { mandates: onGroceries((m) => ({ ...m, not_before: F.iso(F.T0) })) },
  },
  INTENT_DRIFT: { fire: { action: { category: "travel" } }, clear: { action: { category: "Groceries " } } },
  INTENT_MISMATCH: { fire: { action: { category: "travel", merchant: "m-air" } }, clear: { action: { category: "groceries", merchant: "m-green" } } },
  DELEGATION_EXPIRED: {
    fire: { delegation: (d) => ({ ...d, expires_at: F.iso(F.T0) }) },
    clear: { delegation: (d) => ({ ...d, expires_at: F.iso(F.T0 + 1) }) },
  },
  DELEGATION_NOT_YET_VALID: {
    fire: { delegation: (d) => ({ ...d, granted_at: F.iso(F.T0 + 1) }) },
    clear: { delegation: (d) => ({ ...d, granted_at: F.iso(F.T0) }) },
  },
  DELEGATION_REVOKED: { fire: { ctx: { revocations: revoked(["del-1"]) } }, clear: { ctx: { revocations: revoked(["del-other"]) } } },
  DELEGATION_SUSPENDED: { fire: { delegation: (d) => ({ ...d, status: "suspended" }) }, clear: { delegation: (d) => ({ ...d, status: "active" }) } },
  ACTION_NOT_ALLOWED: { fire: { action: { action_type: "subscribe" } }, clear: { action: { action_type: "purchase" } } },
  AGENT_MISMATCH: { fire: { action: { agent_id: "agent-mallory" } }, clear: { action: { agent_id: F.AGENT } } },
  MERCHANT_NOT_IN_SCOPE: {
    fire: { delegation: (d) => ({ ...d, scope: { ...d.scope, merchants: ["m-green"] } }) },
    clear: { delegation: (d) => ({ ...d, scope: { ...d.scope, merchants: ["m-green", "m-fresh"] } }) },
  },
  CATEGORY_NOT_IN_SCOPE: {
    fire: { delegation: (d) => ({ ...d, scope: { ...d.scope, categories: ["travel"] } }) },
    clear: { delegation: (d) => ({ ...d, scope: { ...d.scope, categories: ["travel", "groceries"] } }) },
  },
  HUMAN_APPROVAL_MISSING: {
    fire: { delegation: (d) => ({ ...d, privilege: "high" }) },
    clear: {
      delegation: (d) => ({ ...d, privilege: "high", approval: { type: "HUMAN_APPROVAL", approved_by: "cfo@acme.example", approved_at: d.granted_at } }),
    },
  },
  RECONFIRMATION_OVERDUE: {
    fire: {
      delegation: (d) => ({ ...d, privilege: "high", approval: { type: "HUMAN_APPROVAL", approved_by: "cfo", approved_at: d.granted_at } }),
      ctx: { policy: { ...F.context().policy, reconfirmEveryMs: 24 * 3600_000 } },
    },
    clear: {
      delegation: (d) => ({
        ...d,
        privilege: "high",
        approval: { type: "HUMAN_APPROVAL", approved_by: "cfo", approved_at: d.granted_at },
        reconfirmed_at: F.iso(F.T0 - 3600_000),
      }),
      ctx: { policy: { ...F.context().policy, reconfirmEveryMs: 24 * 3600_000 } },
    },
  },
  CHAIN_BROKEN: { fire: { delegation: link(1, (l) => (l.delegator = { type: "agent", id: "agent-nobody" })) }, clear: {} },
  CHAIN_SCOPE_WIDENED: {
    fire: { delegation: link(2, (l) => (l.scope.maximum_amount = 2000.01)) },
    clear: { delegation: link(2, (l) => (l.scope.maximum_amount = 2000)) },
  },
  CHAIN_LINK_REVOKED: { fire: { ctx: { revocations: revoked(["del-link-2"]) } }, clear: {} },
  CHAIN_LINK_EXPIRED: {
    fire: { ctx: { now: F.T0 }, delegation: link(2, (l) => (l.expires_at = F.iso(F.T0))) },
    clear: { delegation: link(2, (l) => (l.expires_at = F.iso(F.T0 + 4 * 24 * 3600_000))) },
  },
  OUTSIDE_TIME_WINDOW: {
    fire: { delegation: (d) => ({ ...d, conditions: [{ type: "time_window", start: "12:01", end: "23:00", timezone: "Europe/Berlin" }] }) },
    clear: { delegation: (d) => ({ ...d, conditions: [{ type: "time_window", start: "12:00", end: "23:00", timezone: "Europe/Berlin" }] }) },
  },
  OUTSIDE_BUSINESS_HOURS: {
    fire: { delegation: withCondition({ type: "business_hours_only", timezone: "Asia/Tokyo" }) },
    clear: { delegation: withCondition({ type: "business_hours_only", timezone: "Europe/Berlin" }) },
  },
  RISK_SCORE_ABOVE_LIMIT: { fire: { ctx: { riskScore: 71 } }, clear: { ctx: { riskScore: 70 } } },
  RISK_SCORE_UNKNOWN: { fire: { ctx: { riskScore: undefined } }, clear: { ctx: { riskScore: 0 } } },
  MERCHANT_NOT_ALLOWED: { fire: { action: { merchant: "m-shady" } }, clear: { action: { merchant: "m-green" } } },
  PRINCIPAL_NOT_PRESENT: {
    fire: { delegation: withCondition({ type: "principal_present" }), ctx: { principalPresent: false } },
    clear: { delegation: withCondition({ type: "principal_present" }), ctx: { principalPresent: true } },
  },
  CONDITION_INVALID: { fire: { delegation: withCondition({ type: "moon_phase" } as unknown as Condition) }, clear: {} },
  LEDGER_STALE: {
    fire: { agreement: (a) => ({ ...a, ledger_as_of: F.iso(F.T0 - 60_001) }) },
    clear: { agreement: (a) => ({ ...a, ledger_as_of: F.iso(F.T0 - 60_000) }) },
  },
  LEDGER_TRUNCATED: { fire: { ctx: { ledgerSequence: 21 } }, clear: { ctx: { ledgerSequence: 20 } } },
  LEDGER_TOTAL_UNKNOWN: { fire: { agreement: ({ ledger: _l, ledger_head: _h, ...a }) => ({ ...a, ledger_sequence: 0 }) }, clear: {} },
  LEDGER_CHAIN_BROKEN: {
    fire: { agreement: (a) => ({ ...a, ledger: a.ledger?.map((e, i) => (i === 3 ? { ...e, amount: 0.01 } : e)) }) },
    clear: {},
  },
  EVENT_CHAIN_BROKEN: { fire: { agreement: (a) => ({ ...a, events: a.events.map((e, i) => (i === 1 ? { ...e, note: "edited" } : e)) }) }, clear: {} },
  MANDATE_UNSIGNED: { fire: { agreement: (a) => ({ ...a, mandates: a.mandates.map(({ signature: _s, ...m }) => m) }) }, clear: {} },
  SIGNATURE_INVALID: { fire: { agreement: (a) => ({ ...a, mandates: a.mandates.map((m) => ({ ...m, maximum_amount: 5000 })) }) }, clear: {} },
  PRINCIPAL_KEY_MISMATCH: { fire: { signer: F.otherKey }, clear: { signer: F.principalKey } },
  AGREEMENT_REVOKED: {
    fire: { agreement: async (a) => ({ ...a, revocation: await signRevocation(a, { reason: "done", at: F.iso(F.T0 - 1000) }, F.principalKey) }) },
    clear: { ctx: { revocations: revoked(["agr-other"]) } },
  },
  REVOCATION_UNVERIFIED: {
    fire: {
      agreement: async (a) => ({ ...a, revocation: { ...(await signRevocation(a, { reason: "x", at: F.iso(F.T0) }, F.principalKey)), reason: "edited" } }),
    },
    clear: {},
  },
  ACKNOWLEDGEMENT_MISSING: {
    fire: { mandates: onGroceries((m) => ({ ...m, required_acknowledgements: ["merchant"] })) },
    clear: {
      mandates: onGroceries((m) => ({ ...m, required_acknowledgements: ["merchant"] })),
      agreement: async (a) => {
        const g = a.mandates[0] as Mandate;
        const ack = await signAcknowledgement(
          { agreement_id: a.agreement_id, mandate_hash: mandateHash(g), role: "merchant", id: "m-fresh", at: F.iso(F.T0 - 1000) },
          F.merchantKey,
        );
        return { ...a, acknowledgements: [ack] };
      },
    },
  },
  ACKNOWLEDGEMENT_OUTDATED: {
    fire: {
      mandates: onGroceries((m) => ({ ...m, required_acknowledgements: ["merchant"] })),
      agreement: async (a) => {
        const old = a.mandates[0] as Mandate;
        const ack = await signAcknowledgement(
          { agreement_id: a.agreement_id, mandate_hash: mandateHash(old), role: "merchant", id: "m-fresh", at: F.iso(F.T0 - 5000) },
          F.merchantKey,
        );
        const amended = await amendMandate({ ...a, acknowledgements: [ack] }, "groceries", { maximum_amount: 150 }, F.principalKey, {
          at: F.iso(F.T0 - 4000),
          actor: { role: "principal", id: "biz_acme" },
          event_id: "ev-amend",
        });
        return { ...amended, ledger_as_of: F.iso(F.T0 - 1000) };
      },
    },
    clear: { mandates: onGroceries((m) => ({ ...m, required_acknowledgements: [] })) },
  },
  RISK_REVOKE_THRESHOLD: { fire: { ctx: { riskScore: 90 } }, clear: { ctx: { riskScore: 89 } } },
  DENIED_ATTEMPT_BURST: { fire: { ctx: { recentDenials: 5 } }, clear: { ctx: { recentDenials: 4 } } },
  REVOCATION_STATE_STALE: { fire: { ctx: { revocationStateStale: true } }, clear: { ctx: { revocationStateStale: false } } },
};

/** Codes decided outside the engine, by the verify path (tested in test/integration/verify*). */
const VERIFY_PATH_CODES: ReasonCode[] = ["AGENT_NOT_ACTIVE", "NO_ACTIVE_AGREEMENT", "AGREEMENT_NOT_SELECTED"];
/** Decided by the spend transaction against the period windows' counters (tested in test/integration/period-limits.test.ts). */
const SPEND_TRANSACTION_CODES: ReasonCode[] = ["PERIOD_COUNT_EXCEEDED"];
/** Decided by the approvals step of verify (tested in test/integration/approvals.test.ts). */
const APPROVAL_CODES: ReasonCode[] = ["APPROVAL_DECLINED", "APPROVAL_EXPIRED"];
/**
 * Registry codes decided by the controller when a manifest fails its schema (tested in
 * test/e2e/controller*) or names a party without its registered key
 * (test/integration/ack-parties-declared). The controller's own PascalCase lifecycle reasons are
 * not codes of this union (src/controller/reasons.ts, test/unit/controller/reasons.test.ts).
 */
const CONTROLLER_CODES: ReasonCode[] = ["SPEC_INVALID", "NAMESPACE_NOT_BOUND", "ACKNOWLEDGEMENT_KEY_UNREGISTERED", "RECORD_NOT_OWNED"];
/** Decided on agents' signed requests (src/core/httpsig, POST /v1/agents/verify-request): tested in test/unit/core/httpsig/request-signatures.test.ts and test/integration/signed-requests.test.ts. */
const SIGNED_REQUEST_CODES: ReasonCode[] = [
  "REQUEST_SIGNATURE_MISSING",
  "REQUEST_SIGNATURE_MALFORMED",
  "REQUEST_SIGNATURE_EXPIRED",
  "REQUEST_KEY_UNKNOWN",
  "REQUEST_SIGNATURE_INVALID",
  "REQUEST_NONCE_REPLAYED",
  "KEY_DIRECTORY_INVALID",
];

describe("the baseline", () => {
  it("is a realistic ALLOW with no reasons", async () => {
    const d = await run();
    expect(d).toMatchObject({
      verdict: "ALLOW",
      svc_decision: "ALLOW",
      reasons: [],
      messages: [],
      required_action: "NONE",
      intent_id: "groceries",
      amount_minor: 4250n,
    });
  });
});

describe("every reason code fires and clears", () => {
  it("covers the whole union", () => {
    const covered = new Set<string>([
      ...Object.keys(CASES),
      ...VERIFY_PATH_CODES,
      ...SPEND_TRANSACTION_CODES,
      ...CONTROLLER_CODES,
      ...SIGNED_REQUEST_CODES,
      ...APPROVAL_CODES,
    ]);
    expect(REASON_CODES.filter((c) => !covered.has(c))).toEqual([]);
  });
  for (const [code, c] of Object.entries(CASES) as [ReasonCode, Case][]) {
    it(code, async () => {
      const fired = await run(c.fire);
      expect(fired.reasons).toContain(code);
      const info = REASONS[code];
      expect(fired.verdict === info.verdict || fired.verdict === "DENY").toBe(true);
      const msg = fired.messages.find((m) => m.code === code);
      expect(msg?.message.length).toBeGreaterThan(10);
      const cleared = await run(c.clear);
      expect(cleared.reasons).not.toContain(code);
    });
  }
});
