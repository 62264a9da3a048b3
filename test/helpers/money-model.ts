/**
 * The model-based test of the money path (test/integration/money-model.test.ts, and the longer
 * `hack/model/money.ts`): random sequences of verify, retry, outcome (with every kind of
 * credential), revocation and concurrent bursts against TWO `writ serve` processes on one
 * Postgres, checked after every step against a reference model of what must hold:
 *
 * - for every intent, agreement and delegation, the sum of the amounts allowed, authorized or
 *   settled and not released (a `failed` outcome) never exceeds its limit, and Postgres's totals
 *   equal the model's, to the minor unit;
 * - every ALLOW a client receives names exactly one ledger entry of its action, which counts
 *   against the budget when it is answered: an ALLOW for an action the model knows as released,
 *   or past the room the model has left, or on a revoked record, is a failure; a retry of an
 *   allowed action answers the same entry; of a released one, 409;
 * - outcomes: the agent's operator gets 403, an organization that is not a party 404, the party
 *   the moves of src/core/agreement/outcomes.ts;
 * - holds (docs/verify.md, "Holds, captures and refunds"): partial and final captures, voids,
 *   the service's expiry sweep (run by two sweepers at once) and refunds (one intent restores
 *   budget on refunds, the others do not), with reused idempotency keys; after every step
 *   captures <= hold and refunds <= captured for every action, each answer's `hold` is the
 *   model's, and the budget the read API shows (GET /v1/agreements/{id}) is what the spend
 *   transaction checks (Postgres's totals), which is the model's;
 * - at the end, every ledger chain verifies and each ALLOW answered is in it once.
 *
 * The model does not predict DENYs (another process's snapshot may hold a total that is too
 * high for a few milliseconds after a release, and the denied-attempt burst may revoke): it
 * predicts what may never happen, and learns revocations from the answers.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { outcomeStep, verifyLedger, type LaterOutcome, type LedgerOutcome } from "../../src/core/agreement/index.js";
import { toMinor } from "../../src/core/money/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { expireHolds, spendTotals } from "../../src/store/ledger/index.js";
import type { VerifyWorld } from "./verify-world.js";
import { mandate, startVerifyWorld, storeAgreement, uid, untilAllowing } from "./verify-world.js";
import { startServeProcess, type ServeProcess } from "./serve-process.js";
import { expectHoldStep, type Hold } from "./hold-model.js";

/** An HTTP answer. */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

/** The two data-plane processes and the credentials the commands use. */
export interface ModelSystem {
  w: VerifyWorld;
  /** Base URLs of the data-plane processes. */
  urls: readonly string[];
  /** A payment-side organization that is a party of no agreement. */
  strangerKey: string;
}

interface Intent {
  id: string;
  ceilingMinor: bigint;
  sliceMinor: bigint;
  /** The mandate's refunds_restore_budget. */
  restores: boolean;
}

interface Agreement {
  id: string;
  agentId: string;
  delegationId: string | null;
  intents: Intent[];
  /** The delegation's cumulative maximum, when bound to one. */
  delegationMinor?: bigint;
  revoked: boolean;
}

interface Action {
  agreement: Agreement;
  intent: Intent;
  amountMinor: bigint;
  body: { agent_id: string; action: Record<string, unknown> };
  /** The first answer. */
  first: Reply;
  /** The ledger entry of its ALLOW. */
  entry?: { sequence: number; entry_hash: string };
  /** Outcomes in ledger order, once allowed. */
  outcomes: LedgerOutcome[];
  hold: Hold;
}

/** The reference model of one run. */
export class MoneyModel {
  readonly agreements: Agreement[] = [];
  readonly actions: Action[] = [];
  /** Every ALLOW answered, for the final check. */
  readonly allows: { action: Action; entry: { sequence: number; entry_hash: string } }[] = [];
  /** Hold steps appended (not replays nor refusals), by outcome: the run was not vacuous. */
  readonly steps = { captured: 0, voided: 0, refunded: 0, expired: 0 };

  /** Counted (not released) spend of an intent. */
  spentOf(a: Agreement, intent: Intent): bigint {
    let n = 0n;
    for (const x of this.actions) if (x.agreement === a && x.intent === intent) n += countedOf(x);
    return n;
  }

  spentUnder(a: Agreement): bigint {
    return a.intents.reduce((n, i) => n + this.spentOf(a, i), 0n);
  }

  /** Room left for `amount` under every limit of `a`'s intent `intent`. */
  fits(a: Agreement, intent: Intent, amountMinor: bigint): boolean {
    if (a.revoked || amountMinor > intent.ceilingMinor) return false;
    if (this.spentOf(a, intent) + amountMinor > intent.sliceMinor) return false;
    return a.delegationMinor === undefined || this.spentUnder(a) + amountMinor <= a.delegationMinor;
  }
}

function counts(x: Action): boolean {
  return x.outcomes.length > 0 && !x.outcomes.includes("failed");
}

/** What an action counts against its budgets: its amount less what its hold released; 0 when not allowed or failed. */
function countedOf(x: Action): bigint {
  return counts(x) ? x.amountMinor - x.hold.released : 0n;
}

/** Whether anything of the action was released (a retry is then a 409). */
function releasedAny(x: Action): boolean {
  return x.outcomes.some((o) => o === "failed" || o === "voided" || o === "expired" || o === "released");
}

const usd = (major: number) => toMinor(major, "USD");

/** A fresh world for one run: agent A under a delegation (two intents), agent B with a bare agreement. */
export async function newModel(sys: ModelSystem): Promise<MoneyModel> {
  const { w } = sys;
  const m = new MoneyModel();
  const a = (await w.registerAgent(w.operatorKey)).agent_id;
  const b = (await w.registerAgent(w.operatorKey)).agent_id;
  const delegated = await storeAgreement(w, {
    mandates: [
      mandate(a, "i1", { maximum_amount: 40, cumulative_maximum: 60 }),
      mandate(a, "i2", { maximum_amount: 30, cumulative_maximum: 50, refunds_restore_budget: true }),
    ],
    parentLimits: { currency: "USD", maximum_amount: 40, cumulative_maximum: 110 },
    delegation: { scope: { currency: "USD", maximum_amount: 40, cumulative_maximum: 100, refunds_restore_budget: true } },
  });
  m.agreements.push({
    id: delegated.agreementId,
    agentId: a,
    delegationId: delegated.delegationId,
    delegationMinor: usd(100),
    revoked: false,
    intents: [
      { id: "i1", ceilingMinor: usd(40), sliceMinor: usd(60), restores: false },
      { id: "i2", ceilingMinor: usd(30), sliceMinor: usd(50), restores: true },
    ],
  });
  const bare = await storeAgreement(w, { mandates: [mandate(b, "j1", { maximum_amount: 25, cumulative_maximum: 50 })], delegation: false });
  m.agreements.push({
    id: bare.agreementId,
    agentId: b,
    delegationId: null,
    revoked: false,
    intents: [{ id: "j1", ceilingMinor: usd(25), sliceMinor: usd(50), restores: false }],
  });
  return m;
}

/** A request body sent as this exact JSON text (e.g. a number JSON.stringify would not write). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** One HTTP call with a bearer token; `body` is serialised with JSON.stringify unless it is RawJson. */
export async function call(url: string, method: string, path: string, token: string | null, body?: unknown): Promise<Reply> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: body instanceof RawJson ? body.text : JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** Learns from a verify answer: a REVOKE decision revokes the record the model knows it by. */
function learn(m: MoneyModel, a: Agreement, r: Reply): void {
  if (r.status === 200 && r.body.svc_decision === "REVOKE") {
    for (const x of m.agreements) if (x === a || (a.delegationId !== null && x.delegationId === a.delegationId)) x.revoked = true;
  }
}

/** Checks one answer to a NEW action against the room the model had before it, then records it (not its revocations: `learn`). */
function settleNew(m: MoneyModel, x: Action, roomBefore: boolean): void {
  const r = x.first;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  if (r.body.verdict === "ALLOW") {
    expect(roomBefore, `ALLOW past the budget: ${JSON.stringify(r.body)}`).toBe(true);
    const entry = r.body.ledger_entry as { sequence: number; entry_hash: string };
    expect(entry).toBeDefined();
    x.entry = entry;
    x.outcomes = ["allowed"];
    x.hold.open = true;
    m.allows.push({ action: x, entry });
  }
}

function newAction(a: Agreement, intent: Intent, amount: number): Omit<Action, "first"> {
  return {
    agreement: a,
    intent,
    amountMinor: usd(amount),
    outcomes: [],
    hold: { captured: 0n, refunded: 0n, released: 0n, open: false, keys: new Map() },
    body: {
      agent_id: a.agentId,
      action: { action_id: uid("act"), action_type: "purchase", amount, currency: "USD", proposed_at: new Date().toISOString(), intent_id: intent.id },
    },
  };
}

type Cmd = fc.AsyncCommand<MoneyModel, ModelSystem>;

const AMOUNTS = [5, 10, 20, 35];

/** A new action of agreement `ai`'s intent `ii` on process `p`. */
class Verify implements Cmd {
  constructor(
    readonly ai: number,
    readonly ii: number,
    readonly amount: number,
    readonly p: number,
  ) {}
  check = () => true;
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const a = m.agreements[this.ai % m.agreements.length] as Agreement;
    const intent = a.intents[this.ii % a.intents.length] as Intent;
    const x = newAction(a, intent, this.amount);
    const room = m.fits(a, intent, x.amountMinor);
    const first = await call(s.urls[this.p % s.urls.length] as string, "POST", "/v1/verify", s.w.operatorKey, x.body);
    const action = { ...x, first };
    m.actions.push(action);
    settleNew(m, action, room);
    learn(m, a, first);
  }
  toString = () => `verify(${this.ai},${this.ii},${this.amount},p${this.p})`;
}

/** Concurrent new actions on both processes. */
class Burst implements Cmd {
  constructor(readonly picks: readonly { ai: number; ii: number; amount: number; p: number }[]) {}
  check = () => true;
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const xs = this.picks.map((k) => {
      const a = m.agreements[k.ai % m.agreements.length] as Agreement;
      return { k, x: newAction(a, a.intents[k.ii % a.intents.length] as Intent, k.amount) };
    });
    const answers = await Promise.all(xs.map(({ k, x }) => call(s.urls[k.p % s.urls.length] as string, "POST", "/v1/verify", s.w.operatorKey, x.body)));
    // The ALLOWs together must fit the room the burst started with: add them one by one (amounts
    // are positive, so if the sum fits, every prefix in any order does). Revocations the burst
    // caused are learnt after, since an ALLOW may have committed before them.
    const actions = xs.map(({ x }, i) => ({ ...x, first: answers[i] as Reply }));
    for (const action of actions) {
      const room = m.fits(action.agreement, action.intent, action.amountMinor);
      m.actions.push(action);
      settleNew(m, action, room);
    }
    for (const action of actions) learn(m, action.agreement, action.first);
    for (const a of new Set(xs.map(({ x }) => x.agreement))) {
      for (const i of a.intents) expect(m.spentOf(a, i) <= i.sliceMinor).toBe(true);
      if (a.delegationMinor !== undefined) expect(m.spentUnder(a) <= a.delegationMinor).toBe(true);
    }
  }
  toString = () => `burst(${this.picks.map((k) => `${k.ai}/${k.ii}/${k.amount}/p${k.p}`).join(" ")})`;
}

/** A retry of an earlier action, with the same body. */
class Retry implements Cmd {
  constructor(
    readonly xi: number,
    readonly p: number,
  ) {}
  check = (m: Readonly<MoneyModel>) => m.actions.length > 0;
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const x = m.actions[this.xi % m.actions.length] as Action;
    const r = await call(s.urls[this.p % s.urls.length] as string, "POST", "/v1/verify", s.w.operatorKey, x.body);
    if (x.first.status !== 200) return;
    if (releasedAny(x)) {
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(String(r.body.error)).toContain("new action_id");
    } else if (x.entry) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ verdict: "ALLOW", ledger_entry: x.entry });
    } else {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ verdict: x.first.body.verdict, reasons: x.first.body.reasons });
    }
  }
  toString = () => `retry(${this.xi},p${this.p})`;
}

type Who = "party" | "operator" | "stranger";

/** A later outcome of an earlier action, by one kind of credential. */
class Outcome implements Cmd {
  constructor(
    readonly xi: number,
    readonly outcome: LaterOutcome,
    readonly who: Who,
    readonly p: number,
  ) {}
  check = (m: Readonly<MoneyModel>) => m.actions.length > 0;
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const x = m.actions[this.xi % m.actions.length] as Action;
    const token = this.who === "party" ? s.w.psp.key : this.who === "operator" ? s.w.operatorKey : s.strangerKey;
    const r = await call(s.urls[this.p % s.urls.length] as string, "POST", "/v1/verify/outcomes", token, {
      agreement_id: x.agreement.id,
      action_id: x.body.action.action_id,
      outcome: this.outcome,
    });
    if (this.who === "operator") return void expect(r.status).toBe(403);
    if (this.who === "stranger") return void expect(r).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
    const step = outcomeStep(x.outcomes, this.outcome);
    const context = JSON.stringify({ answer: r.body, first: x.first, outcomes: x.outcomes });
    if (step.kind === "refused") return void expect(r.status, context).toBe(step.code === "ACTION_NOT_RECORDED" ? 404 : 409);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.replayed).toBe(step.kind === "replay");
    if (step.kind === "append") {
      x.outcomes.push(this.outcome);
      if (this.outcome === "settled") Object.assign(x.hold, { open: false, closedBy: "settled", captured: x.amountMinor });
      if (this.outcome === "failed") Object.assign(x.hold, { open: false, closedBy: "failed" });
    }
  }
  toString = () => `outcome(${this.xi},${this.outcome},${this.who},p${this.p})`;
}

/** A retry and a `failed` outcome of one allowed action at once: whatever the order, the totals stay exact. */
class RetryWhileFailing implements Cmd {
  constructor(readonly xi: number) {}
  check = (m: Readonly<MoneyModel>) => m.actions.some((x) => x.outcomes.length > 0);
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const allowed = m.actions.filter((x) => x.outcomes.length > 0);
    const x = allowed[this.xi % allowed.length] as Action;
    const [retry, failed] = await Promise.all([
      call(s.urls[0] as string, "POST", "/v1/verify", s.w.operatorKey, x.body),
      call(s.urls[1 % s.urls.length] as string, "POST", "/v1/verify/outcomes", s.w.psp.key, {
        agreement_id: x.agreement.id,
        action_id: x.body.action.action_id,
        outcome: "failed",
      }),
    ]);
    const step = outcomeStep(x.outcomes, "failed");
    if (step.kind === "append") {
      expect(failed.status).toBe(200);
      x.outcomes.push("failed");
      Object.assign(x.hold, { open: false, closedBy: "failed" });
    } else expect(failed.status, JSON.stringify(failed.body)).toBe(step.kind === "replay" ? 200 : 409);
    // The retry raced the release: the old ALLOW (answered before it) or the 409 (after).
    if (retry.status === 200) expect(retry.body).toMatchObject({ verdict: "ALLOW", ledger_entry: x.entry });
    else expect(retry.status).toBe(409);
  }
  toString = () => `retryWhileFailing(${this.xi})`;
}

/** The answer's `hold` is the model's (decimal strings in USD). */
function expectHold(x: Action, r: Reply): void {
  const fmt = (m: bigint) => (Number(m) / 100).toFixed(2);
  expect(r.body.hold, JSON.stringify(r.body)).toMatchObject({
    held: fmt(x.amountMinor),
    captured: fmt(x.hold.captured),
    refunded: fmt(x.hold.refunded),
    counted: fmt(countedOf(x)),
    open: x.hold.open,
  });
}

/** A hold step (captured, voided, refunded) of an earlier action by the party, with the model's prediction. */
class Step implements Cmd {
  constructor(
    readonly xi: number,
    readonly kind: "captured" | "voided" | "refunded",
    readonly amountMinor: bigint,
    readonly final: boolean,
    readonly key: string,
    readonly p: number,
  ) {}
  check = (m: Readonly<MoneyModel>) => m.actions.length > 0;
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    // Mostly an allowed action, a captured one for a refund (one in five among all: a refused one answers 404).
    const allowed = m.actions.filter((a) => a.outcomes.includes("allowed") && (this.kind !== "refunded" || a.hold.captured > 0n));
    const pool = this.xi % 5 === 0 || allowed.length === 0 ? m.actions : allowed;
    const x = pool[this.xi % pool.length] as Action;
    const h = x.hold;
    const body: Record<string, unknown> = { agreement_id: x.agreement.id, action_id: x.body.action.action_id, outcome: this.kind };
    if (this.kind !== "voided") Object.assign(body, { amount: Number(this.amountMinor) / 100, idempotency_key: this.key });
    if (this.kind === "captured" && this.final) body.final = true;
    const r = await call(s.urls[this.p % s.urls.length] as string, "POST", "/v1/verify/outcomes", s.w.psp.key, body);
    const context = JSON.stringify({ answer: r.body, step: this.toString(), outcomes: x.outcomes, hold: { ...h, keys: [...h.keys] } }, (_k, v: unknown) =>
      typeof v === "bigint" ? v.toString() : v,
    );
    if (!x.outcomes.includes("allowed")) return void expect(r.status, context).toBe(404);
    const effect = expectHoldStep(this, x, r, context, x.intent.restores);
    if (effect !== "taken" && effect !== "restored") return;
    expectHold(x, r);
    m.steps[this.kind]++;
  }
  toString = () => `step(${this.xi},${this.kind},${this.amountMinor},${this.final ? "final" : ""},${this.key},p${this.p})`;
}

/** The service's expiry sweep, twice at once (two processes): every open hold of the model expires, once. */
class Expire implements Cmd {
  check = (m: Readonly<MoneyModel>) => m.actions.some((x) => x.hold.open);
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const later = new Date(Date.now() + 3_600_000);
    await Promise.all([1, 2].map(() => expireHolds(s.w.db.pool, { before: later, at: later.toISOString(), limit: 100_000 })));
    for (const x of m.actions) {
      if (!x.hold.open) continue;
      x.hold.released += x.amountMinor - x.hold.captured;
      x.hold.open = false;
      x.hold.closedBy = "expired";
      x.outcomes.push("expired");
      m.steps.expired++;
    }
  }
  toString = () => "expire()";
}

/** The admin revokes an agreement's delegation (DELETE /svc/delegations/{id}). */
class Revoke implements Cmd {
  constructor(
    readonly ai: number,
    readonly p: number,
  ) {}
  check = (m: Readonly<MoneyModel>) => m.agreements.some((a) => a.delegationId !== null && !a.revoked);
  async run(m: MoneyModel, s: ModelSystem): Promise<void> {
    const live = m.agreements.filter((a) => a.delegationId !== null && !a.revoked);
    const a = live[this.ai % live.length] as Agreement;
    const r = await call(s.urls[this.p % s.urls.length] as string, "DELETE", `/svc/delegations/${a.delegationId as string}`, s.w.admin, { reason: "model" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    a.revoked = true;
  }
  toString = () => `revoke(${this.ai},p${this.p})`;
}

/**
 * After every command: Postgres's totals are the model's, and within every limit; the read
 * API's budget shows those totals; captures <= hold, refunds <= captured.
 */
export async function checkInvariants(m: MoneyModel, s: ModelSystem): Promise<void> {
  for (const x of m.actions) expect(x.hold.captured <= x.amountMinor && x.hold.refunded <= x.hold.captured && x.hold.released <= x.amountMinor).toBe(true);
  for (const a of m.agreements) {
    const stored = await spendTotals(s.w.db.pool, a.id);
    const read = await call(s.urls[0] as string, "GET", `/v1/agreements/${a.id}`, s.w.operatorKey);
    expect(read.status).toBe(200);
    const lines = (read.body.budget as { intents: { intent_id: string; spent: string; held: string; captured: string }[] }).intents;
    for (const i of a.intents) {
      const want = m.spentOf(a, i);
      expect(stored.get(i.id) ?? 0n, `${a.id}/${i.id}`).toBe(want);
      expect(want <= i.sliceMinor, `${a.id}/${i.id} over its slice`).toBe(true);
      const line = lines.find((l) => l.intent_id === i.id);
      expect(line && usd(Number(line.spent)), `${a.id}/${i.id} as read`).toBe(stored.get(i.id) ?? 0n);
      const held = m.actions.filter((x) => x.agreement === a && x.intent === i && x.hold.open).reduce((n, x) => n + x.amountMinor - x.hold.captured, 0n);
      expect(line && usd(Number(line.held)), `${a.id}/${i.id} held`).toBe(held);
    }
    if (a.delegationMinor !== undefined) expect(m.spentUnder(a) <= a.delegationMinor, `${a.id} over its delegation`).toBe(true);
  }
}

/** At the end: every chain verifies; every ALLOW answered is its action's one `allowed` entry. */
export async function checkLedgers(m: MoneyModel, s: ModelSystem): Promise<void> {
  for (const a of m.agreements) {
    const full = await loadAgreementWithLedger(s.w.db.pool, a.id);
    expect(full && verifyLedger(full), a.id).toEqual({ state: "ok" });
    const ledger = full?.ledger ?? [];
    for (const { action, entry } of m.allows.filter((x) => x.action.agreement === a)) {
      const mine = ledger.filter((e) => e.action_id === action.body.action.action_id && e.outcome === "allowed");
      expect(mine.map((e) => ({ sequence: e.sequence, entry_hash: e.entry_hash }))).toEqual([entry]);
    }
  }
}

/** The command arbitraries. */
export function moneyCommands(maxCommands: number): fc.Arbitrary<Iterable<Cmd>> {
  const p = fc.nat(1);
  const ai = fc.nat(1);
  const ii = fc.nat(1);
  const amount = fc.constantFrom(...AMOUNTS);
  // Hold steps weigh three times the other commands: they need allowed actions to work on.
  const step = fc
    .tuple(
      fc.nat(200),
      fc.constantFrom<"captured" | "voided" | "refunded">("captured", "captured", "voided", "refunded", "refunded"),
      fc.constantFrom(1n, 99n, 500n, 1000n, 2000n),
      fc.boolean(),
      fc.constantFrom("k1", "k2", "k3"),
      p,
    )
    .map(([x, kind, amount, final, key, q]) => new Step(x, kind, amount, final, key, q));
  return fc.commands(
    [
      fc.tuple(ai, ii, amount, p).map(([a, i, n, q]) => new Verify(a, i, n, q)),
      fc.tuple(fc.nat(200), p).map(([x, q]) => new Retry(x, q)),
      fc
        .tuple(
          fc.nat(200),
          fc.constantFrom<LaterOutcome>("authorized", "settled", "failed"),
          fc.constantFrom<Who>("party", "party", "party", "operator", "stranger"),
          p,
        )
        .map(([x, o, who, q]) => new Outcome(x, o, who, q)),
      fc.array(fc.record({ ai, ii, amount, p }), { minLength: 2, maxLength: 8 }).map((picks) => new Burst(picks)),
      fc.nat(200).map((x) => new RetryWhileFailing(x)),
      step,
      step,
      step,
      fc.constant(null).map(() => new Expire()),
      fc.tuple(ai, p).map(([a, q]) => new Revoke(a, q)),
    ],
    { maxCommands, size: "max" },
  );
}

/** Runs `commands` on a fresh model, checking the invariants after each, and the ledgers at the end. */
export async function runMoneyModel(sys: ModelSystem, commands: Iterable<Cmd>): Promise<MoneyModel> {
  const model = await newModel(sys);
  const checked = [...commands].map((c) => ({
    check: (mm: Readonly<MoneyModel>) => c.check(mm),
    run: async (mm: MoneyModel, s: ModelSystem) => {
      await c.run(mm, s);
      await checkInvariants(mm, s);
    },
    toString: () => c.toString(),
  }));
  await fc.asyncModelRun(() => ({ model, real: sys }), checked);
  await checkLedgers(model, sys);
  return model;
}

/**
 * The system the money model runs against: a verify world, two `writ serve` processes on its
 * database (whatever createTestDatabase made: one Postgres, or a Citus cluster with
 * WRIT_TEST_CITUS=1), an agent allowed on both, and a payment party of no agreement.
 */
export async function startMoneySystem(): Promise<{ sys: ModelSystem; stop: () => Promise<void> }> {
  const w = await startVerifyWorld();
  const children: ServeProcess[] = [];
  const stop = async () => {
    for (const c of children) await c.stop("SIGTERM", 10_000).catch(() => {});
    await w.close();
  };
  try {
    const env = { DATABASE_URL: w.db.url, BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0", LOG_LEVEL: "warn" };
    children.push(...(await Promise.all([startServeProcess({ env }), startServeProcess({ env })])));
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { mandates: [mandate(agent_id, "warm", { maximum_amount: 100, cumulative_maximum: 1_000_000 })] });
    await Promise.all(children.map((c) => untilAllowing(c.url, agent_id, w.operatorKey)));
    const stranger = await w.createOrg("processor_psp");
    return { sys: { w, urls: children.map((c) => c.url), strangerKey: (await w.issueKey(stranger)).token }, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Bounds of a money model check: runs, commands per run, seconds; a failure fast-check printed to replay. */
export interface MoneyCheck {
  runs: number;
  commands: number;
  seconds: number;
  seed?: number;
  path?: string;
}

/** Runs the money model within `c`'s bounds; how many runs and verify actions it made, and the hold steps appended. */
export async function checkMoneyModel(
  sys: ModelSystem,
  c: MoneyCheck,
): Promise<{ runs: number; commands: number; steps: { captured: number; voided: number; refunded: number; expired: number } }> {
  let runs = 0;
  let commands = 0;
  const steps = { captured: 0, voided: 0, refunded: 0, expired: 0 };
  await fc.assert(
    fc.asyncProperty(moneyCommands(c.commands), async (cmds) => {
      const model = await runMoneyModel(sys, cmds);
      runs++;
      commands += model.actions.length;
      for (const k of Object.keys(steps) as (keyof typeof steps)[]) steps[k] += model.steps[k];
    }),
    {
      numRuns: c.runs,
      interruptAfterTimeLimit: c.seconds * 1000,
      markInterruptAsFailure: false,
      endOnFailure: true,
      ...(c.seed !== undefined ? { seed: c.seed, ...(c.path !== undefined ? { path: c.path } : {}) } : {}),
    },
  );
  return { runs, commands, steps };
}
