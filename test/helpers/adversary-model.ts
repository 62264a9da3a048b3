/**
 * The adversarial model-based test (test/integration/adversary-model.test.ts, and the longer
 * `npm run model:adversary`): random sequences of moves by every party that is NOT the
 * principal, against one data plane and the controller's real reconcilers, checked after every
 * step against a reference model of what the principal signed (docs/threat-model.md).
 *
 * The parties and their moves (each a command KIND, switchable, see `ADVERSARY_KINDS`):
 * - the agent (its operator's API key): `verify` (fresh actions; also action ids the operator
 *   planted in a ledger), `retry` (same body), `changedRetry` (same action id, another amount,
 *   intent or merchant), `retention` (time passes: the decision-retention window ends and the
 *   retention worker runs), `oddAmount` (amounts JSON.parse rounds, strings, too many
 *   decimals), `proposedAt` (a foreign currency proposed as of any day);
 * - the operator (platform team; applies any declaration it can sign, through the local
 *   manifest source and the controller, never with the principal's key): `ledgerFailed`
 *   (re-applies an agreement whose `ledger` releases an ALLOWed action: `failed`, `voided`,
 *   `released`), `ledgerZero` (whose `ledger` holds `allowed` entries of 0 for unused action
 *   ids), `chain` (a sub-delegation citing any parent, bound to an agreement the principal
 *   signed for a sub-agent: an honest narrowing, one that also says refunds_restore_budget
 *   false, an inflated copy of the parent's scope, or a scope that drops or loosens the
 *   parent's limits per period; all but the honest ones must be refused), `forgedAck` (an
 *   acknowledgement naming another organization as PSP, signed with a key the operator made),
 *   `annotation` (repoints a resource's `writ.dev/record-id` at another namespace's
 *   delegation, then deletes it), `foreignStep` (hold steps with its own key: 403); its root
 *   grants declare limits per period of their own and refunds_restore_budget true, also
 *   over ga, whose mandate says false;
 * - payment-side organizations, each with its own key: `partyOutcome` (the real PSP the
 *   principal's agreements name), `colluderOutcome` (an organization the principal never
 *   named), `holdStep` (the real PSP: captures partial, final or beyond the hold, voids,
 *   refunds within or beyond the captures, under idempotency keys reused with another body:
 *   409 STEP_CONFLICT), `foreignStep` (the organization never named: 404);
 * - the principal, honestly, so that the others have approvals to abuse: `approve` signs the
 *   approval a STEP_UP opened (grant `dc` needs the principal above 40 USD, "human present";
 *   docs/reference/approvals.md) with the principal's key; the agent then retries it, changes
 *   it (`changedRetry`) or sends other payments.
 *
 * The principal signs limits per period into every mandate (a day with a count, a month, a
 * rolling 2 hours with a count; Europe/Berlin) on the real clock: the model takes each ALLOW's
 * instant from the `at` of its `allowed` entry, the decision time the service recorded.
 *
 * Invariants, after every command:
 * - every ALLOW names a ledger entry of its action at the request's exact amount (converted at
 *   the rate of the decision's day), counted once; a replayed ALLOW answers the same request;
 * - counted spend <= every budget the principal signed: each intent's cumulative maximum and
 *   ceiling, and the `parent_limits` of the root grant on every level of a delegation chain (a
 *   sub-delegation's spend counts against its ancestors);
 * - every window of every limit per period holds (`checkWindows`): the mandate's over its
 *   agreement, and each root grant's over its own agreement and the sub-delegation's below it;
 *   an ALLOW counts what its hold did not release, and as a payment while that is above 0;
 * - what the read API shows for each period (GET /v1/agreements/{id}: the intent's lines, and
 *   a root grant's, which count its sub-delegation's spend too) is the model's usage at the
 *   data plane's now;
 * - captures <= hold and refunds <= captured, in the model and in the stored ledger; a refund
 *   gives budget back only when the mandate and every delegation above say so;
 * - Postgres's totals are the model's, and every agreement's ledger holds exactly the service's
 *   ALLOWs and the real parties' outcomes (only the service writes ledger entries);
 * - the rate source is asked only about the decision's day (not the agent's `proposed_at`);
 * - a delegation is revoked only through its own resource (or a REVOKE the service answered);
 * - an approval never authorizes more than its request: an ALLOW above `dc`'s threshold names
 *   an approval the principal approved for exactly that request, and no other ALLOW names one.
 */
import fc from "fast-check";
import { expect } from "vitest";
import {
  mandateHash,
  outcomeStep,
  signAcknowledgement,
  withLedgerEntry,
  type IntentAgreement,
  type LaterOutcome,
  type LedgerEntry,
  type LedgerOutcome,
} from "../../src/core/agreement/index.js";
import { buildSignedAgreement } from "../../src/core/agreement/index.js";
import { agreementSpecOf, delegationSpecOf } from "../../src/core/crd/index.js";
import type { ChainLink, Delegation } from "../../src/core/delegation/index.js";
import { generateSigner, signerFromSeed, signRecord } from "../../src/core/jose/index.js";
import { APPROVAL_TYP, decisionPayload, type ApprovalContent } from "../../src/core/approvals/index.js";
import { convertMinor, parseRate, toMinor } from "../../src/core/money/index.js";
import { RECORD_ID_ANNOTATION } from "../../src/controller/kinds.js";
import type { ControllerHandle } from "../../src/controller/manager.js";
import { localController } from "../../src/dev/local-controller.js";
import { ORG_LABEL } from "../../src/sources/kubernetes/namespace-binding.js";
import { LocalApiServer, LocalObjectStore } from "../../src/sources/local/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import { PRINCIPAL, principalKey } from "../fixtures/records.js";
import { startFrankfurter, type FrankfurterStandIn } from "./frankfurter.js";
import { call, RawJson, type Reply } from "./money-model.js";
import { windowKey } from "./period-model.js";
import { acknowledgedBy, delegationRecord, HOUR, iso, mandate, startVerifyWorld, uid, type VerifyWorld } from "./verify-world.js";
import { expectHoldStep, type Hold } from "./hold-model.js";

/** Every command kind; `WRIT_ADVERSARY_KINDS` (comma-separated) enables a subset, default all. */
export const ADVERSARY_KINDS = [
  "verify",
  "retry",
  "changedRetry",
  "retention",
  "oddAmount",
  "proposedAt",
  "partyOutcome",
  "colluderOutcome",
  "ledgerFailed",
  "ledgerZero",
  "chain",
  "forgedAck",
  "annotation",
  "approve",
  "holdStep",
  "foreignStep",
  "advance",
] as const;
export type AdversaryKind = (typeof ADVERSARY_KINDS)[number];

/** The kinds `text` names (undefined or empty: all); an unknown name throws. */
export function enabledKinds(text: string | undefined): ReadonlySet<AdversaryKind> {
  if (text === undefined || text.trim() === "") return new Set(ADVERSARY_KINDS);
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const n of names)
    if (!(ADVERSARY_KINDS as readonly string[]).includes(n)) throw new Error(`WRIT_ADVERSARY_KINDS: unknown kind ${n} (known: ${ADVERSARY_KINDS.join(", ")})`);
  return new Set(names as AdversaryKind[]);
}

/** Rates the stand-in publishes (CHF -> USD): an old, cheap day, and the current one (from 3 days ago on). */
const OLD_DAY = "2000-01-03";
const OLD_RATE = "0.59";
const RATE = "1.25";
const DAY = 24 * HOUR;
const dayOf = (ms: number) => iso(ms).slice(0, 10);

/**
 * The data plane's clock: the real one plus an offset the model moves forward (`advance`:
 * minutes, hours, past the next local midnight of a limit's time zone) and sets back to 0 at the
 * start of each run (each run has its own agents, so no window of an earlier run counts). At
 * most `MAX_OFFSET_MS` ahead, so that every record a run signs stays valid.
 */
export class AdversaryClock {
  offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;
}
const MAX_OFFSET_MS = 30 * HOUR;
/** How long the records a run signs and declares are valid (longer than `MAX_OFFSET_MS`, shorter than a standing grant's 7 days). */
const RECORDS_VALID_MS = 3 * 24 * HOUR;

/** The data plane, the controller on an in-memory API server, the rate source and the organizations. */
export interface AdversarySystem {
  w: VerifyWorld;
  /** The data plane's clock (AppDeps.clock): every period window and ledger `at` is its time. */
  clock: AdversaryClock;
  fx: FrankfurterStandIn;
  /** The local manifest source's object store: what the operator applies. */
  store: LocalObjectStore;
  controller: ControllerHandle;
  /** A payment-side organization no agreement names, with its own key. */
  colluder: { orgId: string; key: string };
  /** The controller's warnings and errors. */
  lines: string[];
  stop(): Promise<void>;
}

/** Starts the system (see `AdversarySystem`). */
export async function startAdversarySystem(): Promise<AdversarySystem> {
  const fx = await startFrankfurter();
  fx.setRate(OLD_DAY, "CHF", "USD", OLD_RATE);
  fx.setRate(dayOf(Date.now() - 3 * DAY), "CHF", "USD", RATE);
  const clock = new AdversaryClock();
  const w = await startVerifyWorld(
    { SVC_FX_SOURCE_URL: fx.url, WRIT_RETENTION_INTERVAL_MS: "86400000", WRIT_DECISION_RETENTION_DAYS: "1", LOG_LEVEL: "warn" },
    { clock: () => new Date(clock.now()) },
  );
  const colluderOrg = await w.createOrg("processor_psp", "a wallet the principal never named");
  const colluder = { orgId: colluderOrg, key: (await w.issueKey(colluderOrg)).token };
  const store = new LocalObjectStore();
  const api = new LocalApiServer({ store, namespaceLabels: () => ({ [ORG_LABEL]: w.operatorOrg }) });
  const lines: string[] = [];
  const controller = await localController({ databaseUrl: w.db.url, logSigner: signerFromSeed(w.seed), print: (l) => lines.push(l) })(api);
  return {
    w,
    clock,
    fx,
    store,
    controller,
    colluder,
    lines,
    async stop() {
      await controller.stop();
      await w.close();
      await fx.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The model

interface Intent {
  id: string;
  ceilingMinor: bigint;
  cumulativeMinor: bigint;
  /** The mandate's refunds_restore_budget (the principal's word). */
  restores: boolean;
}

/** A limit per period as the model counts it (amounts in USD major units). */
interface WindowLimit {
  period?: "day" | "month";
  rolling?: string;
  rollingMs?: number;
  amount?: number;
  count?: number;
}

/** The limits per period the principal signs into every mandate (Europe/Berlin). */
const MANDATE_TZ = "Europe/Berlin";
const MANDATE_LIMITS: readonly WindowLimit[] = [
  { period: "day", amount: 90, count: 3 },
  { period: "month", amount: 95 },
  { rolling: "PT2H", rollingMs: 2 * HOUR, count: 3 },
];
/** The limits per period of the root grants the operator declares (America/New_York): they bind every sub-delegation below. */
const ROOT_TZ = "America/New_York";
const ROOT_LIMITS: readonly WindowLimit[] = [
  { period: "day", amount: 95, count: 4 },
  { rolling: "PT1H", rollingMs: HOUR, amount: 80 },
];
const limitsJson = (ls: readonly WindowLimit[]) =>
  ls.map((l) => ({
    ...(l.period ? { period: l.period } : {}),
    ...(l.rolling ? { rolling: l.rolling } : {}),
    ...(l.amount !== undefined ? { amount: l.amount } : {}),
    ...(l.count !== undefined ? { count: l.count } : {}),
  }));

/** A root grant: a delegation the principal's agreements were signed under, and their `parent_limits`. */
interface Root {
  name: "da" | "dc";
  namespace: string;
  record: Delegation;
  budgetMinor: bigint;
  agentId: string;
  /** Its scope's refunds_restore_budget (the operator's word). */
  restores: boolean;
  /** Revoked by the service's own REVOKE (the model learns it from the answer). */
  revokedByService: boolean;
}

interface Agreement {
  /** The resource name (namespace `namespace`). */
  name: string;
  namespace: string;
  delegationName: string;
  id: string;
  agentId: string;
  intent: Intent;
  /** The record as last declared by the operator (without any ledger it planted). */
  record: IntentAgreement;
  /** The root grant its spend counts against (a sub-delegation's: the parent the stored chain cites); null until declared. */
  root: Root | null;
  /** Action ids of `allowed` 0-entries the operator planted. */
  planted: string[];
  /** Whether every stored delegation it counts under says refunds_restore_budget (its grant's, and for gb its parent's). */
  scopesRestore: boolean;
}

/** A verify request the agent sent. */
interface Sent {
  agentId: string;
  actionId: string;
  /** The body as sent. */
  body: Record<string, unknown> | RawJson;
  /** What makes two requests the same (amount text, currency, intent, merchant). */
  requestKey: string;
  /** The spend it must count when ALLOWed, in USD minor units; null: no ALLOW is right (not an exact amount). */
  expectedMinor: bigint | null;
  first: Reply;
}

/** An ALLOW the service answered, as the model counts it. */
interface Allow {
  agreement: Agreement;
  actionId: string;
  amountMinor: bigint;
  entry: { sequence: number; entry_hash: string };
  requestKey: string;
  /** Outcomes recorded by a real party, in ledger order (starting with `allowed`). */
  outcomes: LedgerOutcome[];
  /** The decision time the service recorded (its `allowed` entry's `at`): the instant its period windows count it at. */
  atMs: number;
  hold: Hold;
}

/** What an ALLOW counts against its budgets now: its amount less what its hold released; nothing once failed. */
function countedOf(x: Allow): bigint {
  return x.outcomes.includes("failed") ? 0n : x.amountMinor - x.hold.released;
}

/** Whether a refund of `a`'s gives budget back: the principal's mandate and every delegation it counts under say so. */
function restores(a: Agreement): boolean {
  return a.intent.restores && a.scopesRestore;
}

/** The reference model of one run. */
export class AdversaryModel {
  readonly agreements: Agreement[] = [];
  readonly roots: Root[] = [];
  readonly sent: Sent[] = [];
  readonly allows: Allow[] = [];
  /** Approvals the principal approved: approval id -> the request key it was opened for. */
  readonly approved = new Map<string, string>();
  /** Agents: a (root da), b (the sub-agent the principal signed for), c (root dc, another namespace). */
  agents: { a: string; b: string; c: string } = { a: "", b: "", c: "" };
  chainDeclared = false;
  /** Decoy resources the operator made (`annotation`). */
  decoys = 0;
  /** Verify decisions of this run may have been pruned. */
  retentionRan = false;
  /** DENYs for a limit per period, by amount and by count (the limits were reached, not only declared). */
  readonly periodDenials = { amount: 0, count: 0 };
  /** Hold steps appended by the party (not replays nor refusals), restoring refunds among them, and steps refused as STEP_CONFLICT. */
  readonly steps = { captured: 0, voided: 0, refunded: 0, restored: 0, conflicts: 0 };
  constructor(readonly run: string) {}

  get nsA(): string {
    return `${this.run}-a`;
  }
  get nsB(): string {
    return `${this.run}-b`;
  }
  byId(id: unknown): Agreement | undefined {
    return this.agreements.find((a) => a.id === id);
  }
  ofAgent(agentId: string): Agreement | undefined {
    return this.agreements.find((a) => a.agentId === agentId);
  }
  counted(a: Agreement): bigint {
    let n = 0n;
    for (const x of this.allows) if (x.agreement === a) n += countedOf(x);
    return n;
  }
}

// ---------------------------------------------------------------------------------------------
// Declarations through the local manifest source and the controller

const API_VERSION = "writ.dev/v1alpha1";
type Plural = "delegations" | "intentagreements";
const KIND: Record<Plural, string> = { delegations: "Delegation", intentagreements: "IntentAgreement" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded) until the controller has reconciled the resource's generation, or it is gone. */
async function settled(sys: AdversarySystem, plural: Plural, ns: string, name: string): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const o = sys.store.get(plural, ns, name);
    const status = o?.status as { observedGeneration?: number } | undefined;
    if (!o || (status?.observedGeneration !== undefined && status.observedGeneration === o.metadata.generation))
      return status as Record<string, unknown> | undefined;
    if (Date.now() > deadline) throw new Error(`${plural} ${ns}/${name} was not reconciled in time: ${JSON.stringify(o)}\n${sys.lines.slice(-20).join("\n")}`);
    await sleep(5);
  }
}

/** `kubectl apply` of one resource, then the controller's reconcile of it. */
async function declare(sys: AdversarySystem, plural: Plural, ns: string, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) {
  sys.store.apply(plural, { apiVersion: API_VERSION, kind: KIND[plural], metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) }, spec });
  return settled(sys, plural, ns, name);
}

/** `kubectl delete` of one resource, waiting until the finalizer let it go. */
async function remove(sys: AdversarySystem, plural: Plural, ns: string, name: string): Promise<void> {
  sys.store.delete(plural, ns, name);
  const deadline = Date.now() + 20_000;
  while (sys.store.get(plural, ns, name)) {
    if (Date.now() > deadline) throw new Error(`${plural} ${ns}/${name} was not finalized in time\n${sys.lines.slice(-20).join("\n")}`);
    await sleep(5);
  }
}

const declareAgreement = (sys: AdversarySystem, a: Agreement, record: IntentAgreement) =>
  declare(sys, "intentagreements", a.namespace, a.name, agreementSpecOf(record as unknown as Record<string, unknown>, a.delegationName));
const declareDelegation = (sys: AdversarySystem, ns: string, name: string, record: Delegation, annotations?: Record<string, string>) =>
  declare(sys, "delegations", ns, name, delegationSpecOf(record as unknown as Record<string, unknown>), annotations);

function isReady(status: Record<string, unknown> | undefined): boolean {
  const conditions = (status?.conditions ?? []) as { type: string; status: string }[];
  return conditions.some((c) => c.type === "Ready" && c.status === "True");
}

const usd = (major: number) => toMinor(major, "USD");
const BUDGET = 100;

/** What the principal signs: one intent for `agentId` (ceiling and total 100 USD) under a parent of 100 USD. */
async function signed(w: VerifyWorld, agentId: string, intentId: string, restoresBudget: boolean): Promise<{ record: IntentAgreement; intent: Intent }> {
  const at = Date.now() - HOUR;
  const id = uid("agr");
  const record = await buildSignedAgreement(
    {
      agreement_id: id,
      mandates: [
        mandate(agentId, intentId, {
          maximum_amount: BUDGET,
          cumulative_maximum: BUDGET,
          expires_at: iso(Date.now() + RECORDS_VALID_MS),
          time_zone: MANDATE_TZ,
          period_limits: limitsJson(MANDATE_LIMITS),
          refunds_restore_budget: restoresBudget,
        }),
      ],
      parent_limits: { currency: "USD", maximum_amount: BUDGET, cumulative_maximum: BUDGET },
      at: iso(at),
    },
    principalKey,
  );
  return {
    record: await acknowledgedBy(record, [w.psp], iso(at)),
    intent: { id: intentId, ceilingMinor: usd(BUDGET), cumulativeMinor: usd(BUDGET), restores: restoresBudget },
  };
}

/**
 * A fresh run: agents a, b, c registered to the operator; the principal's grants `da` (agent a,
 * namespace A) and `dc` (agent c, namespace B), each with its signed agreement, declared and
 * Ready; and the agreement the principal signed for sub-agent b (declared by `chain`).
 */
export async function newAdversaryModel(sys: AdversarySystem): Promise<AdversaryModel> {
  const { w } = sys;
  sys.clock.offsetMs = 0;
  const m = new AdversaryModel(uid("r"));
  const [a, b, c] = await Promise.all([0, 1, 2].map(async () => (await w.registerAgent(w.operatorKey)).agent_id));
  m.agents = { a: a as string, b: b as string, c: c as string };
  const at = Date.now() - HOUR;
  for (const [name, ns, agentId, intentId] of [
    ["da", m.nsA, m.agents.a, "i1"],
    ["dc", m.nsB, m.agents.c, "k1"],
  ] as const) {
    // The operator's grants: limits per period of their own (binding every sub-delegation
    // below), and refunds_restore_budget true on both; ga's mandate says false (so no refund of
    // ga restores, whatever the operator declares), gc's and gb's say true.
    const record = delegationRecord(uid("del"), agentId, {
      at,
      scope: {
        maximum_amount: BUDGET,
        cumulative_maximum: BUDGET,
        time_zone: ROOT_TZ,
        period_limits: limitsJson(ROOT_LIMITS),
        refunds_restore_budget: true,
      },
    });
    record.expires_at = iso(Date.now() + RECORDS_VALID_MS);
    // dc needs the principal above APPROVAL_ABOVE USD (approvals; the principal's `approve` move).
    if (name === "dc") record.conditions = [{ type: "principal_present", above_amount: APPROVAL_ABOVE, currency: "USD" }];
    const root: Root = { name, namespace: ns, agentId, budgetMinor: usd(BUDGET), revokedByService: false, record, restores: true };
    m.roots.push(root);
    const s = await signed(w, agentId, intentId, name === "dc");
    m.agreements.push({
      name: `g${name.slice(1)}`,
      namespace: ns,
      delegationName: name,
      id: s.record.agreement_id,
      agentId,
      intent: s.intent,
      record: s.record,
      root,
      planted: [],
      scopesRestore: root.restores,
    });
  }
  const sub = await signed(w, m.agents.b, "j1", true);
  m.agreements.push({
    name: "gb",
    namespace: m.nsA,
    delegationName: "db",
    id: sub.record.agreement_id,
    agentId: m.agents.b,
    intent: sub.intent,
    record: sub.record,
    root: null,
    planted: [],
    scopesRestore: false,
  });
  await Promise.all(
    m.roots.map(async (root) => {
      const agreement = m.agreements.find((x) => x.root === root) as Agreement;
      expect(isReady(await declareDelegation(sys, root.namespace, root.name, root.record)), `${root.name}: ${sys.lines.slice(-5).join("\n")}`).toBe(true);
      expect(isReady(await declareAgreement(sys, agreement, agreement.record)), `${agreement.name}: ${sys.lines.slice(-5).join("\n")}`).toBe(true);
    }),
  );
  return m;
}

// ---------------------------------------------------------------------------------------------
// Checking answers

/** Learns from a verify answer: a REVOKE decision revokes the agent's grant (the service's own act). */
function learn(m: AdversaryModel, r: Reply, agentId: string): void {
  if (r.status !== 200 || r.body.svc_decision !== "REVOKE") return;
  for (const root of m.roots) if (root.agentId === agentId) root.revokedByService = true;
}

/** Checks a verify answer against the model and records an ALLOW (see the module comment). */
async function settle(m: AdversaryModel, sys: AdversarySystem, x: Sent): Promise<void> {
  const r = x.first;
  const context = JSON.stringify({ sent: x.body instanceof RawJson ? x.body.text : x.body, answer: r.body });
  expect(r.status, `a 5xx: ${context}`).toBeLessThan(500);
  learn(m, r, x.agentId);
  if (r.status === 200 && Array.isArray(r.body.reasons)) {
    if (r.body.reasons.includes("PERIOD_LIMIT_EXCEEDED")) m.periodDenials.amount++;
    if (r.body.reasons.includes("PERIOD_COUNT_EXCEEDED")) m.periodDenials.count++;
  }
  if (r.status !== 200 || r.body.verdict !== "ALLOW") return;
  // An approval never authorizes more than its request.
  const approvalId = r.body.approval_id;
  if (approvalId !== undefined) expect(m.approved.get(String(approvalId)), `ALLOW under an approval of another request: ${context}`).toBe(x.requestKey);
  const dc = m.roots.find((root) => root.name === "dc");
  if (dc && x.agentId === dc.agentId && m.ofAgent(x.agentId)?.root === dc && (x.expectedMinor === null || x.expectedMinor > usd(APPROVAL_ABOVE))) {
    expect(approvalId, `ALLOW above ${APPROVAL_ABOVE} USD of dc without the principal's approval: ${context}`).toBeDefined();
  }
  const agreement = m.byId(r.body.agreement_id);
  expect(agreement, `ALLOW on an agreement the principal did not sign for this agent: ${context}`).toBeDefined();
  if (!agreement) return;
  const entry = r.body.ledger_entry as { sequence: number; entry_hash: string } | undefined;
  expect(entry, `ALLOW without a ledger entry: ${context}`).toBeDefined();
  if (!entry) return;
  const earlier = m.allows.find((a) => a.agreement === agreement && a.entry.sequence === entry.sequence);
  if (earlier) {
    expect(earlier.requestKey, `ALLOW answered from the entry of another request (not counted at its amount): ${context}`).toBe(x.requestKey);
    expect(earlier.outcomes.includes("failed"), `ALLOW answered from a released entry (counts nothing): ${context}`).toBe(false);
    return;
  }
  expect(x.expectedMinor, `ALLOW of an amount that is not exact in its currency: ${context}`).not.toBeNull();
  const full = await loadAgreementWithLedger(sys.w.db.pool, agreement.id);
  const stored = full?.ledger?.find((e) => e.sequence === entry.sequence);
  expect(stored, `ALLOW names no stored entry: ${context}`).toBeDefined();
  if (!stored) return;
  const counted = stored.amount === undefined ? null : toMinor(stored.amount, stored.currency);
  expect(
    { action_id: stored.action_id, outcome: stored.outcome, minor: counted },
    `ALLOW not counted once at its exact amount: ${context} entry ${JSON.stringify(stored)}`,
  ).toEqual({
    action_id: x.actionId,
    outcome: "allowed",
    minor: x.expectedMinor,
  });
  m.allows.push({
    agreement,
    actionId: x.actionId,
    amountMinor: x.expectedMinor as bigint,
    entry,
    requestKey: x.requestKey,
    outcomes: ["allowed"],
    atMs: Date.parse(stored.at),
    hold: { captured: 0n, refunded: 0n, released: 0n, open: true, keys: new Map() },
  });
}

/** Sends a verify request as the agent (its operator's key) and settles it. */
async function sendVerify(m: AdversaryModel, sys: AdversarySystem, s: Omit<Sent, "first">): Promise<Sent> {
  const first = await call(sys.w.server.url, "POST", "/v1/verify", sys.w.operatorKey, s.body);
  const x = { ...s, first };
  m.sent.push(x);
  await settle(m, sys, x);
  return x;
}

/**
 * Amounts as JSON text, and what each must count in USD minor units (null: never an ALLOW).
 * JSON.parse rounds the first two to 50; a string is not the documented JSON number, but one
 * that is an exact amount is at least counted at that amount.
 */
const ODD_AMOUNTS: readonly [string, bigint | null][] = [
  ["50.000000000000001", null],
  ["49.999999999999999", null],
  ["100.004", null],
  ["0.001", null],
  ["1e-7", null],
  ['"50.000000000000001"', null],
  ['"50"', 5000n],
  ["25.10", 2510n],
  ["1e1", 1000n],
];
const NORMAL_AMOUNTS = [5, 25, 50, 100];
/** Grant dc needs the principal above this many USD. */
const APPROVAL_ABOVE = 40;

function actionBody(
  agentId: string,
  intentId: string,
  o: { now: number; actionId?: string; amountText: string; currency?: string; proposedAt?: string; merchant?: string },
): { actionId: string; body: RawJson; requestKey: string } {
  const actionId = o.actionId ?? uid("act");
  const currency = o.currency ?? "USD";
  const action = [
    `"action_id":${JSON.stringify(actionId)}`,
    `"action_type":"purchase"`,
    `"amount":${o.amountText}`,
    `"currency":${JSON.stringify(currency)}`,
    `"proposed_at":${JSON.stringify(o.proposedAt ?? iso(o.now))}`,
    `"intent_id":${JSON.stringify(intentId)}`,
    ...(o.merchant ? [`"merchant":${JSON.stringify(o.merchant)}`] : []),
  ];
  return {
    actionId,
    body: new RawJson(`{"agent_id":${JSON.stringify(agentId)},"action":{${action.join(",")}}}`),
    requestKey: JSON.stringify([o.amountText, currency, intentId, o.merchant ?? null]),
  };
}

type Cmd = fc.AsyncCommand<AdversaryModel, AdversarySystem>;
const agentOf = (m: AdversaryModel, k: number) => [m.agents.a, m.agents.b, m.agents.c][k % 3] as string;
const intentOf = (m: AdversaryModel, agentId: string) => m.ofAgent(agentId)?.intent.id ?? "i1";

// ---------------------------------------------------------------------------------------------
// The agent's commands

/** A fresh action (or, when the operator planted some, a planted action id) of agent `ai`. */
class Verify implements Cmd {
  constructor(
    readonly ai: number,
    readonly amount: number,
    readonly planted: boolean,
  ) {}
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const agentId = agentOf(m, this.ai);
    const plantedIds = this.planted ? m.agreements.flatMap((a) => (a.agentId === agentId ? a.planted : [])) : [];
    const actionId = plantedIds[this.amount % Math.max(1, plantedIds.length)];
    const b = actionBody(agentId, intentOf(m, agentId), { now: s.clock.now(), amountText: String(this.amount), ...(actionId ? { actionId } : {}) });
    await sendVerify(m, s, { agentId, ...b, expectedMinor: usd(this.amount) });
  }
  toString = () => `verify(${this.ai},${this.amount}${this.planted ? ",planted" : ""})`;
}

/** The same request again. */
class Retry implements Cmd {
  constructor(readonly xi: number) {}
  check = (m: Readonly<AdversaryModel>) => m.sent.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const x = m.sent[this.xi % m.sent.length] as Sent;
    await sendVerify(m, s, { agentId: x.agentId, actionId: x.actionId, body: x.body, requestKey: x.requestKey, expectedMinor: x.expectedMinor });
  }
  toString = () => `retry(${this.xi})`;
}

type Change = "amount" | "merchant" | "currency";

/** An earlier action id with another body. */
class ChangedRetry implements Cmd {
  constructor(
    readonly xi: number,
    readonly change: Change,
    readonly amount: number,
  ) {}
  check = (m: Readonly<AdversaryModel>) => m.sent.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const x = m.sent[this.xi % m.sent.length] as Sent;
    const intentId = intentOf(m, x.agentId);
    const o =
      this.change === "amount"
        ? { amountText: String(this.amount) }
        : this.change === "merchant"
          ? { amountText: String(this.amount), merchant: "merchant-elsewhere" }
          : { amountText: String(this.amount), currency: "CHF" };
    const b = actionBody(x.agentId, intentId, { now: s.clock.now(), actionId: x.actionId, ...o });
    const expectedMinor = this.change === "currency" ? convertMinor(toMinor(this.amount, "CHF"), "CHF", "USD", parseRate(RATE)) : usd(this.amount);
    await sendVerify(m, s, { agentId: x.agentId, ...b, expectedMinor });
  }
  toString = () => `changedRetry(${this.xi},${this.change},${this.amount})`;
}

/** Time passes: every decision of this run is older than the retention window, and the worker runs. */
class Retention implements Cmd {
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const agents = Object.values(m.agents);
    await s.w.db.pool.query("UPDATE verify_decisions SET created_at = now() - interval '2 days' WHERE agent_id = ANY($1::text[])", [agents]);
    const worker = s.w.server.app.retention;
    expect(worker, "the retention worker runs in the data plane").not.toBeNull();
    await worker?.runNow();
    m.retentionRan = true;
  }
  toString = () => "retention()";
}

/** An amount as JSON text that JSON.parse rounds, or a string, or one with too many decimals. */
class OddAmount implements Cmd {
  constructor(
    readonly ai: number,
    readonly k: number,
  ) {}
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const agentId = agentOf(m, this.ai);
    const [text, expectedMinor] = ODD_AMOUNTS[this.k % ODD_AMOUNTS.length] as [string, bigint | null];
    await sendVerify(m, s, { agentId, ...actionBody(agentId, intentOf(m, agentId), { now: s.clock.now(), amountText: text }), expectedMinor });
  }
  toString = () => `oddAmount(${this.ai},${ODD_AMOUNTS[this.k % ODD_AMOUNTS.length]?.[0] ?? ""})`;
}

/** `proposed_at` choices: now, a minute ago, the cheap old day, a year back, a day and a year ahead. */
const PROPOSED_AT: readonly ((now: number) => string)[] = [
  (now) => iso(now),
  (now) => iso(now - 60_000),
  () => `${OLD_DAY}T10:00:00Z`,
  (now) => iso(now - 400 * DAY),
  (now) => iso(now + DAY),
  (now) => iso(now + 400 * DAY),
];

/** A CHF action proposed as of any day: it counts at the rate of the decision's day. */
class ProposedAt implements Cmd {
  constructor(
    readonly ai: number,
    readonly chf: number,
    readonly k: number,
  ) {}
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const agentId = agentOf(m, this.ai);
    const now = s.clock.now();
    s.fx.resetCalls();
    const proposedAt = (PROPOSED_AT[this.k % PROPOSED_AT.length] as (n: number) => string)(now);
    const b = actionBody(agentId, intentOf(m, agentId), { now, amountText: String(this.chf), currency: "CHF", proposedAt });
    await sendVerify(m, s, { agentId, ...b, expectedMinor: convertMinor(toMinor(this.chf, "CHF"), "CHF", "USD", parseRate(RATE)) });
    const days = new Set([dayOf(now - DAY), dayOf(now), dayOf(now + DAY)]);
    for (const path of s.fx.requests) {
      expect(days.has(path.slice(1, 11)), `the agent chose the rate day: the rate source was asked ${path} (proposed_at ${proposedAt})`).toBe(true);
    }
  }
  toString = () => `proposedAt(${this.ai},${this.chf} CHF,${this.k})`;
}

/** The next instant after `ms` at which the local date of `tz` changes (bisection on the model's own window keys). */
function nextMidnight(tz: string, ms: number): number {
  const key = windowKey("day", ms, tz);
  let lo = ms;
  let hi = ms + 6 * HOUR;
  while (windowKey("day", hi, tz) === key) hi += 6 * HOUR;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (windowKey("day", mid, tz) === key) lo = mid;
    else hi = mid;
  }
  return hi;
}

type AdvanceKind = "minutes" | "hours" | "midnight@mandate" | "midnight@root";

/** Time passes on the data plane's clock: minutes, hours, or to just before, at or just after the next local midnight of the mandates' or the root grants' time zone. */
class Advance implements Cmd {
  constructor(
    readonly kind: AdvanceKind,
    readonly n: number,
  ) {}
  check = () => true;
  async run(_m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const now = s.clock.now();
    let to: number;
    if (this.kind === "minutes") to = now + (1 + this.n) * 7 * 60_000;
    else if (this.kind === "hours") to = now + (1 + this.n) * HOUR;
    else to = Math.max(now, nextMidnight(this.kind === "midnight@mandate" ? MANDATE_TZ : ROOT_TZ, now) + ((this.n % 3) - 1) * 1000);
    const offset = s.clock.offsetMs + (to - now);
    if (offset <= MAX_OFFSET_MS) s.clock.offsetMs = offset;
  }
  toString = () => `advance(${this.kind},${this.n})`;
}

// ---------------------------------------------------------------------------------------------
// Payment-side commands

/** An outcome by the PSP every agreement of the principal names. */
class PartyOutcome implements Cmd {
  constructor(
    readonly xi: number,
    readonly outcome: LaterOutcome,
  ) {}
  check = (m: Readonly<AdversaryModel>) => m.allows.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const x = m.allows[this.xi % m.allows.length] as Allow;
    const r = await call(s.w.server.url, "POST", "/v1/verify/outcomes", s.w.psp.key, {
      agreement_id: x.agreement.id,
      action_id: x.actionId,
      outcome: this.outcome,
    });
    expect(r.status).toBeLessThan(500);
    const step = outcomeStep(x.outcomes, this.outcome);
    if (r.status === 200 && r.body.replayed !== true) {
      expect(step.kind, `an outcome outcomes.ts refuses was recorded: ${JSON.stringify(r.body)}`).toBe("append");
      x.outcomes.push(this.outcome);
      // A settled hold counts as captured in full (refunds may follow); a failed one releases all.
      if (this.outcome === "settled") Object.assign(x.hold, { open: false, closedBy: "settled", captured: x.amountMinor });
      if (this.outcome === "failed") Object.assign(x.hold, { open: false, closedBy: "failed" });
    }
  }
  toString = () => `partyOutcome(${this.xi},${this.outcome})`;
}

/** An outcome by an organization the principal never named (it is not the owner of the fact). */
class ColluderOutcome implements Cmd {
  constructor(
    readonly xi: number,
    readonly outcome: LaterOutcome,
  ) {}
  check = (m: Readonly<AdversaryModel>) => m.allows.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const x = m.allows[this.xi % m.allows.length] as Allow;
    const r = await call(s.w.server.url, "POST", "/v1/verify/outcomes", s.colluder.key, {
      agreement_id: x.agreement.id,
      action_id: x.actionId,
      outcome: this.outcome,
    });
    expect(r.status).toBeLessThan(500);
    // Nothing to record: the invariants find an outcome the service took from a non-party.
  }
  toString = () => `colluderOutcome(${this.xi},${this.outcome})`;
}

/** The answer's `hold` is the model's (decimal strings in USD). */
function expectHold(x: Allow, r: Reply, context: string): void {
  const fmt = (n: bigint) => (Number(n) / 100).toFixed(2);
  expect(r.body.hold, context).toMatchObject({
    held: fmt(x.amountMinor),
    captured: fmt(x.hold.captured),
    refunded: fmt(x.hold.refunded),
    counted: fmt(countedOf(x)),
    open: x.hold.open,
  });
}

type StepKind = "captured" | "voided" | "refunded";

/** The body of a hold step (a capture or refund carries its amount and idempotency key). */
function stepBody(x: Allow, kind: StepKind, amountMinor: bigint, final: boolean, key: string): Record<string, unknown> {
  const body: Record<string, unknown> = { agreement_id: x.agreement.id, action_id: x.actionId, outcome: kind };
  if (kind !== "voided") Object.assign(body, { amount: Number(amountMinor) / 100, idempotency_key: key });
  if (kind === "captured" && final) body.final = true;
  return body;
}

/**
 * A hold step by the payment party the principal's agreements name (its own key): a capture
 * (partial, final, or more than the hold), a void, a refund (within or beyond the captures),
 * under an idempotency key that may have been used before with another body (409
 * STEP_CONFLICT). Predicted from the model's own account of the hold; a refund gives budget
 * back only where the principal's mandate and every delegation above say so.
 */
class HoldStep implements Cmd {
  constructor(
    readonly xi: number,
    readonly kind: StepKind,
    readonly amountMinor: bigint,
    readonly final: boolean,
    readonly key: string,
  ) {}
  check = (m: Readonly<AdversaryModel>) => m.allows.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    // Mostly a hold with captures for a refund.
    const captured = m.allows.filter((a) => a.hold.captured > 0n && !a.outcomes.includes("failed"));
    const pool = this.kind === "refunded" && captured.length > 0 && this.xi % 4 !== 0 ? captured : m.allows;
    const x = pool[this.xi % pool.length] as Allow;
    const h = x.hold;
    const r = await call(s.w.server.url, "POST", "/v1/verify/outcomes", s.w.psp.key, stepBody(x, this.kind, this.amountMinor, this.final, this.key));
    const context = JSON.stringify({ answer: r.body, step: this.toString(), outcomes: x.outcomes, hold: { ...h, keys: [...h.keys] } }, (_k, v: unknown) =>
      typeof v === "bigint" ? v.toString() : v,
    );
    expect(r.status, context).toBeLessThan(500);
    const effect = expectHoldStep(this, x, r, context, restores(x.agreement));
    if (effect === "conflict") m.steps.conflicts++;
    if (effect === "restored") m.steps.restored++;
    if (effect !== "taken" && effect !== "restored") return;
    expectHold(x, r, context);
    m.steps[this.kind]++;
  }
  toString = () => `holdStep(${this.xi},${this.kind},${this.amountMinor},${this.final ? "final" : ""},${this.key})`;
}

/** A hold step by the agent's operator (403: it spends, it never records) or an organization the principal never named (404). */
class ForeignStep implements Cmd {
  constructor(
    readonly xi: number,
    readonly who: "operator" | "colluder",
    readonly kind: StepKind,
    readonly amountMinor: bigint,
  ) {}
  check = (m: Readonly<AdversaryModel>) => m.allows.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const x = m.allows[this.xi % m.allows.length] as Allow;
    const token = this.who === "operator" ? s.w.operatorKey : s.colluder.key;
    const r = await call(s.w.server.url, "POST", "/v1/verify/outcomes", token, stepBody(x, this.kind, this.amountMinor, this.xi % 2 === 0, `f${this.xi % 3}`));
    if (this.who === "operator") expect(r.status, JSON.stringify(r.body)).toBe(403);
    else expect(r, JSON.stringify(r.body)).toMatchObject({ status: 404, body: { error: "agreement was not found" } });
  }
  toString = () => `foreignStep(${this.xi},${this.who},${this.kind},${this.amountMinor})`;
}

// ---------------------------------------------------------------------------------------------
// The operator's commands (declarations; never the principal's key)

/** The stored agreement `a` as the operator can read it, with entries appended to its ledger. */
async function withPlantedEntries(
  s: AdversarySystem,
  a: Agreement,
  entries: { actionId: string; outcome: LedgerOutcome; amount: number }[],
): Promise<IntentAgreement | undefined> {
  const stored = await loadAgreementWithLedger(s.w.db.pool, a.id);
  if (!stored) return undefined;
  let next: IntentAgreement = {
    ...a.record,
    ledger: stored.ledger ?? [],
    ledger_sequence: stored.ledger_sequence ?? 0,
    ...(stored.ledger_head ? { ledger_head: stored.ledger_head } : {}),
  };
  for (const e of entries) {
    next = withLedgerEntry(next, {
      action_id: e.actionId,
      at: iso(Date.now()),
      currency: "USD",
      outcome: e.outcome,
      amount: e.amount,
      intent_id: a.intent.id,
    }).agreement;
  }
  return next;
}

/** Re-applies an agreement whose `ledger` releases an ALLOWed action: `failed`, or the hold steps `voided` or `released` (of the whole hold). */
class LedgerFailed implements Cmd {
  constructor(
    readonly xi: number,
    readonly outcome: "failed" | "voided" | "released" = "failed",
  ) {}
  check = (m: Readonly<AdversaryModel>) => m.allows.length > 0;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const x = m.allows[this.xi % m.allows.length] as Allow;
    const record = await withPlantedEntries(s, x.agreement, [{ actionId: x.actionId, outcome: this.outcome, amount: Number(x.amountMinor) / 100 }]);
    if (record) await declareAgreement(s, x.agreement, record);
  }
  toString = () => `ledgerFailed(${this.xi},${this.outcome})`;
}

/** Re-applies an agreement whose `ledger` holds `allowed` entries of 0 for action ids not used yet. */
class LedgerZero implements Cmd {
  constructor(
    readonly ai: number,
    readonly n: number,
  ) {}
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const a = m.agreements.filter((x) => x.root !== null)[this.ai % 2] as Agreement;
    const ids = Array.from({ length: this.n }, () => uid("planted"));
    const record = await withPlantedEntries(
      s,
      a,
      ids.map((actionId) => ({ actionId, outcome: "allowed", amount: 0 })),
    );
    if (!record) return;
    await declareAgreement(s, a, record);
    a.planted.push(...ids);
  }
  toString = () => `ledgerZero(${this.ai},${this.n})`;
}

/**
 * How the operator declares the sub-delegation: an honest narrowing of its parent (`honest`,
 * or `noRestore`, which also says refunds_restore_budget false), an inflated copy of the
 * parent's scope in the link (and an inflated budget), or a scope that drops the parent's
 * limits per period, loosens them, or counts them in another time zone (other days). All but
 * `honest` and `noRestore` must be refused (a stored ancestor's limits bind its children);
 * refunds of b's restore budget only when the child, its parent and b's mandate all say so.
 */
type ChainMode = "honest" | "noRestore" | "inflated" | "dropsPeriods" | "loosensPeriods" | "shiftsZone";
const CHAIN_MODES: readonly ChainMode[] = ["honest", "noRestore", "inflated", "dropsPeriods", "loosensPeriods", "shiftsZone"];

/** A sub-delegation from agent a (or c) to b citing that parent (see `ChainMode`), bound to the agreement the principal signed for b. */
class Chain implements Cmd {
  constructor(
    readonly parent: number,
    readonly mode: ChainMode,
  ) {}
  check = (m: Readonly<AdversaryModel>) => !m.chainDeclared;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    m.chainDeclared = true;
    const parent = m.roots[this.parent % m.roots.length] as Root;
    const p = parent.record;
    const inflated = this.mode === "inflated";
    const copy = inflated ? { ...p.scope, maximum_amount: 100_000, cumulative_maximum: 100_000 } : p.scope;
    const link: ChainLink = {
      delegation_id: p.delegation_id,
      delegator: { type: PRINCIPAL.type, id: PRINCIPAL.id },
      delegate: { agent_id: parent.agentId },
      delegated_at: p.granted_at,
      expires_at: p.expires_at,
      scope: copy,
      conditions: p.conditions ?? [],
    } as ChainLink;
    const periods =
      this.mode === "dropsPeriods"
        ? {}
        : this.mode === "loosensPeriods"
          ? { time_zone: ROOT_TZ, period_limits: limitsJson(ROOT_LIMITS.map((l) => ({ ...l, ...(l.amount !== undefined ? { amount: l.amount * 10 } : {}) }))) }
          : { time_zone: this.mode === "shiftsZone" ? "Pacific/Kiritimati" : ROOT_TZ, period_limits: limitsJson(ROOT_LIMITS) };
    const restoresBudget = this.mode === "noRestore" ? false : parent.restores;
    const child: Delegation = {
      ...delegationRecord(uid("del"), m.agents.b, {
        at: Date.now() - HOUR / 2,
        scope: { maximum_amount: BUDGET, cumulative_maximum: inflated ? 5000 : BUDGET, ...periods, refunds_restore_budget: restoresBudget },
        chain: [link],
      }),
      expires_at: p.expires_at,
      conditions: p.conditions ?? [],
    };
    const status = await declareDelegation(s, m.nsA, "db", child);
    const widens = this.mode !== "honest" && this.mode !== "noRestore";
    if (widens) expect(isReady(status), `a sub-delegation (${this.mode}) that widens its stored parent was stored: ${JSON.stringify(status)}`).toBe(false);
    const b = m.agreements.find((x) => x.name === "gb") as Agreement;
    b.root = parent;
    b.scopesRestore = restoresBudget && parent.restores;
    await declareAgreement(s, b, b.record);
  }
  toString = () => `chain(${this.parent},${this.mode})`;
}

/** The principal approves the approval an earlier answer opened (signed with the principal's key); the agent retries it. */
class Approve implements Cmd {
  constructor(readonly xi: number) {}
  check = (m: Readonly<AdversaryModel>) => m.sent.some((x) => typeof x.first.body.approval_id === "string");
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const opened = m.sent.filter((x) => typeof x.first.body.approval_id === "string");
    const x = opened[this.xi % opened.length] as Sent;
    const id = String(x.first.body.approval_id);
    const got = await call(s.w.server.url, "GET", `/v1/approvals/${id}`, s.w.operatorKey);
    expect(got.status).toBe(200);
    if (got.body.status !== "pending") return;
    const content = got.body.content as ApprovalContent;
    const signature = await signRecord(decisionPayload(content, "approve"), principalKey, APPROVAL_TYP);
    const r = await call(s.w.server.url, "POST", `/v1/approvals/${id}/decision`, null, { decision: "approve", signature });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    m.approved.set(id, x.requestKey);
    // The agent, told by its poll, sends the approved request again.
    await sendVerify(m, s, { agentId: x.agentId, actionId: x.actionId, body: x.body, requestKey: x.requestKey, expectedMinor: x.expectedMinor });
  }
  toString = () => `approve(${this.xi})`;
}

/** Re-applies an agreement with an acknowledgement naming the colluder as PSP, signed by a key the operator made. */
class ForgedAck implements Cmd {
  constructor(readonly ai: number) {}
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const a = m.agreements.filter((x) => x.root !== null)[this.ai % m.agreements.filter((x) => x.root !== null).length] as Agreement;
    const key = generateSigner();
    const acks = [];
    for (const md of a.record.mandates) {
      acks.push(
        await signAcknowledgement({ agreement_id: a.id, mandate_hash: mandateHash(md), role: "psp", id: s.colluder.orgId, at: iso(Date.now() - HOUR) }, key),
      );
    }
    a.record = { ...a.record, acknowledgements: [...(a.record.acknowledgements ?? []), ...acks] };
    await declareAgreement(s, a, a.record);
  }
  toString = () => `forgedAck(${this.ai})`;
}

/** A decoy Delegation in namespace A whose `writ.dev/record-id` is repointed at namespace B's grant, then deleted. */
class Annotation implements Cmd {
  check = () => true;
  async run(m: AdversaryModel, s: AdversarySystem): Promise<void> {
    const target = m.roots.find((r) => r.name === "dc") as Root;
    const name = `decoy-${++m.decoys}`;
    await declareDelegation(
      s,
      m.nsA,
      name,
      delegationRecord(uid("del"), m.agents.a, { at: Date.now() - HOUR, scope: { maximum_amount: 1, cumulative_maximum: 1 } }),
    );
    // A metadata-only update (no new generation), as `kubectl annotate --overwrite` makes it.
    const spec = s.store.get("delegations", m.nsA, name)?.spec;
    s.store.apply("delegations", {
      apiVersion: API_VERSION,
      kind: KIND.delegations,
      metadata: { name, namespace: m.nsA, annotations: { [RECORD_ID_ANNOTATION]: target.record.delegation_id } },
      spec,
    });
    await remove(s, "delegations", m.nsA, name);
  }
  toString = () => "annotation()";
}

// ---------------------------------------------------------------------------------------------
// The invariants

const entryKey = (e: Pick<LedgerEntry, "outcome" | "action_id" | "amount" | "currency">) =>
  e.outcome === "allowed" ? `allowed ${e.action_id} ${e.amount === undefined ? "?" : toMinor(e.amount, e.currency).toString()}` : `${e.outcome} ${e.action_id}`;

/**
 * Every window of every limit per period holds over `payments` (what each counts now, at the
 * decision time the service recorded): for each counted payment, the calendar window holding
 * it (keyed by the local date or month in `tz`, computed here independently of the service's
 * window arithmetic) and the rolling window ending at it hold at most the limit's amount and
 * count. A payment counts in a window while it counts anything (a release of all of it gives
 * the payment back too).
 */
function checkWindows(payments: readonly Allow[], limits: readonly WindowLimit[], tz: string, who: string): void {
  const live = payments.filter((p) => countedOf(p) > 0n);
  for (const p of live) {
    for (const l of limits) {
      const inWindow =
        l.rollingMs !== undefined
          ? (q: Allow) => q.atMs > p.atMs - (l.rollingMs as number) && q.atMs <= p.atMs
          : (q: Allow) => windowKey(l.period as "day" | "month", q.atMs, tz) === windowKey(l.period as "day" | "month", p.atMs, tz);
      const ws = live.filter(inWindow);
      const spent = ws.reduce((n, q) => n + countedOf(q), 0n);
      const name = `${who}: the ${l.period ?? l.rolling ?? ""} window (${tz}) of ${iso(p.atMs)}`;
      if (l.amount !== undefined) expect(spent <= usd(l.amount), `${name} counts ${spent} over the limit of ${l.amount} USD`).toBe(true);
      if (l.count !== undefined) expect(ws.length <= l.count, `${name} counts ${ws.length} payments over the limit of ${l.count}`).toBe(true);
    }
  }
}

/** A period line of the read API's budget (GET /v1/agreements/{id}). */
interface PeriodLineJson {
  spent: string;
  count: number;
}

/** What `payments` count now in each window of `limits` holding `nowMs` (the rolling window ending at it). */
function usageAt(payments: readonly Allow[], l: WindowLimit, tz: string, nowMs: number): { spent: bigint; count: number } {
  const inWindow =
    l.rollingMs !== undefined
      ? (q: Allow) => q.atMs > nowMs - (l.rollingMs as number) && q.atMs <= nowMs
      : (q: Allow) => windowKey(l.period as "day" | "month", q.atMs, tz) === windowKey(l.period as "day" | "month", nowMs, tz);
  const ws = payments.filter((p) => countedOf(p) > 0n && inWindow(p));
  return { spent: ws.reduce((n, q) => n + countedOf(q), 0n), count: ws.length };
}

/**
 * What the read API shows for `lines` (spent and count of each period line, in the order of
 * `limits`) is the model's usage of `payments` at the data plane's now: the windows the spend
 * transaction checks, with every hold step's release in them.
 */
function expectPeriodLines(
  lines: PeriodLineJson[] | undefined,
  payments: readonly Allow[],
  limits: readonly WindowLimit[],
  tz: string,
  [fromMs, toMs]: readonly [number, number],
  who: string,
) {
  expect(lines?.length, `${who}: the read API's period lines`).toBe(limits.length);
  limits.forEach((l, i) => {
    const line = (lines as PeriodLineJson[])[i] as PeriodLineJson;
    // The service read at an instant between fromMs and toMs (a window may turn in between:
    // then the line is either end's usage).
    const seen = { spent: toMinor(line.spent, "USD"), count: line.count };
    const ends = [fromMs, toMs].map((t) => usageAt(payments, l, tz, t)).map((u) => ({ spent: u.spent, count: u.count }));
    const ctx = `${who}: the read API's ${l.period ?? l.rolling ?? ""} line between ${iso(fromMs)} and ${iso(toMs)}: ${JSON.stringify(line)}`;
    expect(seen, ctx).toEqual(ends.find((u) => u.spent === seen.spent && u.count === seen.count) ?? ends[1]);
  });
}

/** Sum of the amounts (minor units) of `action`'s entries with `outcome`. */
function sumOf(ledger: readonly LedgerEntry[], action: string, outcome: LedgerOutcome): bigint {
  let n = 0n;
  for (const e of ledger) if (e.action_id === action && e.outcome === outcome && e.amount !== undefined) n += toMinor(e.amount, e.currency);
  return n;
}

/** After every command (see the module comment). */
export async function checkAdversaryInvariants(m: AdversaryModel, s: AdversarySystem): Promise<void> {
  const pool = s.w.db.pool;
  for (const x of m.allows) {
    const h = x.hold;
    expect(h.captured <= x.amountMinor && h.refunded <= h.captured && h.released <= x.amountMinor, `${x.actionId}: the model's hold went out of bounds`).toBe(
      true,
    );
  }
  for (const a of m.agreements) {
    const full = await loadAgreementWithLedger(pool, a.id);
    const want = m.allows
      .filter((x) => x.agreement === a)
      .flatMap((x) => x.outcomes.map((o) => (o === "allowed" ? `allowed ${x.actionId} ${x.amountMinor}` : `${o} ${x.actionId}`)));
    const have = (full?.ledger ?? []).map(entryKey);
    expect(have.sort(), `${a.name}: only the service writes ledger entries (its ALLOWs and the real parties' outcomes)`).toEqual(want.sort());
    const counted = m.counted(a);
    const totals = full ? await spendTotals(pool, a.id) : new Map<string, bigint>();
    expect(totals.get(a.intent.id) ?? 0n, `${a.name}: every ALLOW counted once at its amount (Postgres's total is the model's)`).toBe(counted);
    expect(counted <= a.intent.cumulativeMinor, `${a.name}: spend ${counted} over the intent's signed total ${a.intent.cumulativeMinor}`).toBe(true);
    for (const x of m.allows)
      if (x.agreement === a) expect(x.amountMinor <= a.intent.ceilingMinor, `${a.name}: an ALLOW of ${x.amountMinor} above the signed ceiling`).toBe(true);
    // Captures <= hold, refunds <= captured, as the stored ledger says (not only the model).
    const ledger = full?.ledger ?? [];
    for (const x of m.allows) {
      if (x.agreement !== a) continue;
      const captured = sumOf(ledger, x.actionId, "captured");
      const refunded = sumOf(ledger, x.actionId, "refunded");
      expect(captured <= x.amountMinor, `${a.name}/${x.actionId}: captures ${captured} over the hold ${x.amountMinor}`).toBe(true);
      expect(refunded <= captured || x.outcomes.includes("settled"), `${a.name}/${x.actionId}: refunds ${refunded} over the captures ${captured}`).toBe(true);
      if (x.outcomes.includes("settled")) expect(refunded <= x.amountMinor, `${a.name}/${x.actionId}: refunds ${refunded} over a settled hold`).toBe(true);
    }
    // The read API shows the windows the spend transaction checks: the intent's, and for a
    // root grant's agreement the grant's own, which count its sub-delegation's spend too.
    const asked = s.clock.now();
    const read = await call(s.w.server.url, "GET", `/v1/agreements/${a.id}`, s.w.operatorKey);
    if (!(read.status === 404 && a.root === null) && !(read.status === 404 && a.name === "gb")) {
      expect(read.status, `${a.name}: ${JSON.stringify(read.body)}`).toBe(200);
      const budget = read.body.budget as { intents: { periods?: PeriodLineJson[] }[]; delegation?: { periods?: PeriodLineJson[] } };
      const now = [asked, s.clock.now()] as const;
      const own = m.allows.filter((x) => x.agreement === a);
      expectPeriodLines(budget.intents[0]?.periods, own, MANDATE_LIMITS, MANDATE_TZ, now, `${a.name} (intent ${a.intent.id})`);
      const root = a.name === "gb" ? undefined : a.root;
      if (root)
        expectPeriodLines(
          budget.delegation?.periods,
          m.allows.filter((x) => x.agreement.root === root),
          ROOT_LIMITS,
          ROOT_TZ,
          now,
          `${a.name} (grant ${root.name} and below)`,
        );
    }
    // Every window of the limits per period the principal signed into the mandate.
    checkWindows(
      m.allows.filter((x) => x.agreement === a),
      MANDATE_LIMITS,
      MANDATE_TZ,
      `${a.name} (intent ${a.intent.id}, the principal's)`,
    );
  }
  for (const root of m.roots) {
    const under = m.agreements.filter((a) => a.root === root).reduce((n, a) => n + m.counted(a), 0n);
    expect(
      under <= root.budgetMinor,
      `${root.name}: spend ${under} under the grant and its sub-delegations is over the ${root.budgetMinor} the principal signed (parent_limits)`,
    ).toBe(true);
    // A stored ancestor's limits per period bind its whole subtree (its own agreement and a sub-delegation's).
    checkWindows(
      m.allows.filter((x) => x.agreement.root === root),
      ROOT_LIMITS,
      ROOT_TZ,
      `${root.name} and the sub-delegations below it`,
    );
  }
  const dc = m.roots.find((r) => r.name === "dc") as Root;
  const row = await pool.query<{ revoked: boolean }>("SELECT revoked_at IS NOT NULL AS revoked FROM delegations WHERE delegation_id = $1", [
    dc.record.delegation_id,
  ]);
  if (!dc.revokedByService) expect(row.rows[0]?.revoked, `${dc.name} (namespace B) revoked by a resource that is not its own`).toBe(false);
}

// ---------------------------------------------------------------------------------------------
// Arbitraries and the run

/** The command arbitraries of the enabled kinds. */
export function adversaryCommands(maxCommands: number, kinds: ReadonlySet<AdversaryKind>): fc.Arbitrary<Iterable<Cmd>> {
  const ai = fc.nat(2);
  const xi = fc.nat(200);
  const amount = fc.constantFrom(...NORMAL_AMOUNTS);
  const later = fc.constantFrom<LaterOutcome>("authorized", "settled", "failed");
  const all: Record<AdversaryKind, fc.Arbitrary<Cmd>> = {
    verify: fc.tuple(ai, amount, fc.boolean()).map(([a, n, p]) => new Verify(a, n, p)),
    retry: xi.map((x) => new Retry(x)),
    changedRetry: fc.tuple(xi, fc.constantFrom<Change>("amount", "merchant", "currency"), amount).map(([x, c, n]) => new ChangedRetry(x, c, n)),
    retention: fc.constant(null).map(() => new Retention()),
    oddAmount: fc.tuple(ai, fc.nat(ODD_AMOUNTS.length - 1)).map(([a, k]) => new OddAmount(a, k)),
    proposedAt: fc.tuple(ai, fc.constantFrom(40, 80), fc.nat(PROPOSED_AT.length - 1)).map(([a, n, k]) => new ProposedAt(a, n, k)),
    partyOutcome: fc.tuple(xi, later).map(([x, o]) => new PartyOutcome(x, o)),
    colluderOutcome: fc.tuple(xi, later).map(([x, o]) => new ColluderOutcome(x, o)),
    ledgerFailed: fc.tuple(xi, fc.constantFrom<"failed" | "voided" | "released">("failed", "voided", "released")).map(([x, o]) => new LedgerFailed(x, o)),
    ledgerZero: fc.tuple(fc.nat(1), fc.integer({ min: 1, max: 4 })).map(([a, n]) => new LedgerZero(a, n)),
    chain: fc.tuple(fc.nat(1), fc.constantFrom(...CHAIN_MODES)).map(([p, mode]) => new Chain(p, mode)),
    forgedAck: fc.nat(1).map((a) => new ForgedAck(a)),
    annotation: fc.constant(null).map(() => new Annotation()),
    approve: xi.map((x) => new Approve(x)),
    holdStep: fc
      .tuple(
        xi,
        fc.constantFrom<StepKind>("captured", "captured", "voided", "refunded", "refunded"),
        fc.constantFrom(1n, 99n, 1000n, 2500n, 5000n, 10_001n),
        fc.boolean(),
        fc.constantFrom("k1", "k2", "k3"),
      )
      .map(([x, kind, amount, final, key]) => new HoldStep(x, kind, amount, final, key)),
    advance: fc.tuple(fc.constantFrom<AdvanceKind>("minutes", "hours", "midnight@mandate", "midnight@root"), fc.nat(5)).map(([k, n]) => new Advance(k, n)),
    foreignStep: fc
      .tuple(
        xi,
        fc.constantFrom<"operator" | "colluder">("operator", "colluder"),
        fc.constantFrom<StepKind>("captured", "voided", "refunded"),
        fc.constantFrom(1n, 2500n),
      )
      .map(([x, who, kind, amount]) => new ForeignStep(x, who, kind, amount)),
  };
  // Honest verifies weigh more, so budgets get spent and the adversaries have something to beat.
  // Hold steps weigh three times: they need ALLOWs to work on, and each has many outcomes.
  const weight = (k: AdversaryKind) => (k === "verify" ? 4 : k === "holdStep" ? 3 : 1);
  const list = ADVERSARY_KINDS.filter((k) => kinds.has(k)).flatMap((k) => Array.from({ length: weight(k) }, () => all[k]));
  if (list.length === 0) throw new Error("no command kind is enabled");
  return fc.commands(list, { maxCommands, size: "max" });
}

/** Runs `commands` on a fresh model, checking the invariants after each. */
export async function runAdversaryModel(sys: AdversarySystem, commands: Iterable<Cmd>): Promise<AdversaryModel> {
  const model = await newAdversaryModel(sys);
  await checkAdversaryInvariants(model, sys);
  const checked = [...commands].map((c) => ({
    check: (mm: Readonly<AdversaryModel>) => c.check(mm),
    run: async (mm: AdversaryModel, s: AdversarySystem) => {
      await c.run(mm, s);
      await checkAdversaryInvariants(mm, s);
    },
    toString: () => c.toString(),
  }));
  await fc.asyncModelRun(() => ({ model, real: sys }), checked);
  return model;
}
