/**
 * `verifyAction` (src/verify/verify-action.ts) with fakes for the gather side and for the
 * decision store under the real decision log: which reads each path makes, the answer, and the
 * one effect committed (nothing, a refusal with or without the burst flag, a spend, a
 * revocation), plus the decision log's idempotency: replay, ACTION_REUSED, and the release of
 * a spend that lost the race to another answer.
 */
import { describe, expect, it } from "vitest";
import { prepareDelegation } from "../../src/core/delegation/index.js";
import { DEFAULT_POLICY, NO_REVOCATIONS } from "../../src/core/evaluate/index.js";
import type { HashString } from "../../src/core/canonical/index.js";
import type { ActiveAgreementRow } from "../../src/store/agreements-read.js";
import type { AgentForVerify } from "../../src/store/agents.js";
import { splitAgreement } from "../../src/store/agreements.js";
import type { AllowedSpend, SpendResult } from "../../src/store/ledger/index.js";
import type { NewVerifyDecision, StoredVerifyDecision } from "../../src/store/verify-decisions.js";
import { type RevokedCause } from "../../src/store/verify-reads.js";
import type { VerifyCandidate } from "../../src/verify/caches/candidates.js";
import { withLedgerTotals } from "../../src/verify/caches/overlay.js";
import { RecordCache } from "../../src/verify/caches/record-cache.js";
import { DecisionLog, type DecisionStore } from "../../src/verify/commit/decision-log.js";
import type { Gather, GatherUpkeep } from "../../src/verify/gather/index.js";
import { question, VerifyError } from "../../src/verify/pipeline/decide.js";
import { readRequest, type VerifyRequest, type VerifyResponse } from "../../src/verify/pipeline/request.js";
import { verifyAction, type VerifyDeps } from "../../src/verify/verify-action.js";
import { AGENT, agreement, delegation, iso, T0 } from "../fixtures/records.js";

const ORG = "org_op";
const ENTRY = { sequence: 7, entry_hash: `sha256:${"cd".repeat(32)}` as HashString };

async function candidate(): Promise<VerifyCandidate> {
  const a = await agreement();
  const base = await new RecordCache().agreement("agr-1", 1, () => splitAgreement(a).record);
  return {
    agreementId: "agr-1",
    revision: 1,
    orgId: null,
    agreement: withLedgerTotals(base, { ledgerSequence: 0, ledgerHead: undefined, spent: new Map(), asOfMs: T0 }),
    delegation: prepareDelegation(delegation(a)),
    row: {} as ActiveAgreementRow,
  };
}

function request(over: Partial<VerifyRequest["action"]> = {}, top: Partial<VerifyRequest> = {}): VerifyRequest {
  return {
    agent_id: AGENT,
    action: {
      action_id: "act-new",
      action_type: "purchase",
      amount: 42.5,
      currency: "USD",
      proposed_at: iso(T0),
      merchant: "m-fresh",
      category: "groceries",
      ...over,
    },
    risk_score: 10,
    principal_present: true,
    ...top,
  };
}

interface World {
  stale?: string;
  agent?: AgentForVerify | null;
  candidates?: VerifyCandidate[];
  recentDenials?: number;
  cause?: RevokedCause;
  /** What the spend transaction answers (default: recorded, its answer stored with it). */
  spend?: (s: AllowedSpend) => SpendResult;
  /** Decisions stored before, by action id. */
  stored?: Map<string, StoredVerifyDecision>;
}

/** verifyAction over fakes; `reads` and `writes` list what it did, in order. */
async function run(req: VerifyRequest, w: World = {}) {
  const reads: string[] = [];
  const writes: string[] = [];
  const counted: string[] = [];
  const saved: NewVerifyDecision[] = [];
  const spends: AllowedSpend[] = [];
  const stored = w.stored ?? new Map<string, StoredVerifyDecision>();
  const cs = w.candidates ?? [await candidate()];
  const agent =
    w.agent === null
      ? undefined
      : (w.agent ?? {
          agent_id: AGENT,
          org_id: ORG,
          status: "active",
          public_key: {} as AgentForVerify["public_key"],
          fingerprint: "fp" as AgentForVerify["fingerprint"],
        });
  const gather: Gather = {
    staleness: () => w.stale,
    agent: async () => (reads.push("agent"), agent ? { agent } : {}),
    candidates: async () => (reads.push("candidates"), { candidates: cs, recentDenials: w.recentDenials ?? 0 }),
    revokedCause: async () => (reads.push("revokedCause"), w.cause),
    evidence: async (c) => {
      reads.push("evidence");
      return { agreement: c.agreement, delegation: c.delegation!, revocations: NO_REVOCATIONS, revocationStateStale: false };
    },
  };
  const upkeep: GatherUpkeep = {
    denied: () => writes.push("noted denial"),
    spent: () => writes.push("noted spend"),
    changed: () => writes.push("forgot agent"),
    revoked: (_a, _org, kind, ids) => writes.push(`marked ${kind} ${ids.join(",")}`),
  };
  const keep = (d: NewVerifyDecision): StoredVerifyDecision => {
    const row = { ...d, createdAt: new Date(T0) };
    stored.set(d.actionId, row);
    return row;
  };
  const store: DecisionStore = {
    find: async (_agent, actionId) => (reads.push("find"), stored.get(actionId)),
    save: async (d) => {
      writes.push("save");
      const had = stored.get(d.actionId);
      return had ? { stored: false, decision: had } : { stored: true, decision: keep(d) };
    },
    saveRefusal: async (d) => {
      writes.push("save refusal");
      saved.push(d);
      const had = stored.get(d.actionId);
      if (had) return { stored: false, decision: had };
      keep(d);
      return { stored: true };
    },
    spend: async (s) => {
      writes.push("spend");
      spends.push(s);
      return w.spend?.(s) ?? { recorded: true, replayed: false, entry: { ...ENTRY } as never, intentSpentMinor: 4250n, decisionStored: true };
    },
    allowedAction: async () => (reads.push("allowedAction"), { ...ENTRY, released: false }),
    release: async (agreementId, actionId) => writes.push(`release ${agreementId} ${actionId}`),
    revoke: async (p) => {
      writes.push(`revoke ${p.reason.split(":")[0]}`);
      const d = keep({
        agentId: p.agentId,
        actionId: p.decision.actionId,
        agreementId: p.candidate.agreementId,
        requestHash: p.decision.requestHash,
        decision: p.decision.body,
      });
      return { revocation: { ids: ["del-1"], found: true, agreementIds: ["agr-1"], logSequence: null } as never, saved: { stored: true, decision: d } };
    },
  };
  const deps: VerifyDeps = {
    gather,
    log: new DecisionLog({
      store,
      upkeep,
      metrics: { countDecision: (v, r) => counted.push(`${v} ${r.join(",")}`) },
      logSigner: () => null,
      logOptions: (now) => ({ now }),
    }),
    clock: () => new Date(T0),
    proposedAtSkewMs: 300_000,
    policy: DEFAULT_POLICY,
  };
  const out: { answer?: VerifyResponse; error?: unknown } = await verifyAction(deps, ORG, req).then(
    (answer) => ({ answer }),
    (error: unknown) => ({ error }),
  );
  return { ...out, reads, writes, counted, saved, spends, stored };
}

const hashOf = (req: VerifyRequest) => readRequest(req).hash;

describe("verifyAction", () => {
  it("ALLOW: gathers the agent, its candidates and the evidence, records the spend with its answer, and answers its entry", async () => {
    const r = await run(request());
    expect(r.answer).toMatchObject({ verdict: "ALLOW", svc_decision: "ALLOW", agreement_id: "agr-1", intent_id: "groceries", ledger_entry: ENTRY });
    expect(r.reads).toEqual(["agent", "candidates", "evidence"]);
    expect(r.writes).toEqual(["spend", "noted spend"]);
    expect(r.spends[0]).toMatchObject({
      agreementId: "agr-1",
      intentId: "groceries",
      actionId: "act-new",
      amountMinor: 4250n,
      at: iso(T0),
      decision: { agentId: AGENT, requestHash: hashOf(request()) },
    });
    expect(r.counted).toEqual(["ALLOW "]);
  });

  it("a stale revocation index: STEP_UP REVOCATION_STATE_STALE with its reason, nothing read, nothing stored", async () => {
    const r = await run(request(), { stale: "the LISTEN connection is down" });
    expect(r.answer).toMatchObject({
      verdict: "STEP_UP",
      reasons: ["REVOCATION_STATE_STALE"],
      messages: [{ message: "the LISTEN connection is down; retry later" }],
      agreement_id: null,
    });
    expect(r.reads).toEqual([]);
    expect(r.writes).toEqual([]);
    expect(r.counted).toEqual(["STEP_UP REVOCATION_STATE_STALE"]);
  });

  it("an unknown agent or another operator's: the VerifyError, nothing stored", async () => {
    const unknown = await run(request(), { agent: null });
    expect(unknown.error).toMatchObject({ code: "AGENT_NOT_FOUND" });
    const other = await run(request(), { agent: { agent_id: AGENT, org_id: "org_other", status: "active" } as AgentForVerify });
    expect(other.error).toMatchObject({ code: "AGENT_NOT_OWNED" });
    for (const r of [unknown, other]) {
      expect(r.reads).toEqual(["agent"]);
      expect(r.writes).toEqual([]);
    }
  });

  it("proposed_at out of skew: PROPOSED_AT_SKEW, unless the same request was answered before (its answer again)", async () => {
    const skewed = request({ proposed_at: iso(T0 - 3_600_000) });
    const r = await run(skewed);
    expect(r.error).toBeInstanceOf(VerifyError);
    expect(r.error).toMatchObject({ code: "PROPOSED_AT_SKEW" });
    expect(r.reads).toEqual(["agent", "find"]);
    const before = new Map([
      [
        "act-new",
        {
          agentId: AGENT,
          actionId: "act-new",
          agreementId: null,
          requestHash: hashOf(skewed),
          decision: { verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] },
          burstExempt: true,
          createdAt: new Date(T0),
        },
      ],
    ]);
    const again = await run(skewed, { stored: before });
    expect(again.answer).toEqual({ verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] });
    expect(again.counted).toEqual([]);
  });

  it("an agent not active: its refusal stored (burst-exempt), its candidates never read", async () => {
    const r = await run(request(), { agent: { agent_id: AGENT, org_id: ORG, status: "suspended" } as AgentForVerify });
    expect(r.answer).toMatchObject({ verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] });
    expect(r.reads).toEqual(["agent"]);
    expect(r.writes).toEqual(["save refusal"]);
    expect(r.saved[0]?.burstExempt).toBe(true);
  });

  it("no live candidate: the revocation that explains it is read and answered", async () => {
    const r = await run(request(), { candidates: [], cause: { agreementId: "agr-9", reason: "DELEGATION_REVOKED", delegationId: "del-9" } });
    expect(r.answer).toMatchObject({
      reasons: ["DELEGATION_REVOKED"],
      agreement_id: "agr-9",
      messages: [{ message: "delegation del-9 of agreement agr-9 is revoked" }],
    });
    expect(r.reads).toEqual(["agent", "candidates", "revokedCause"]);
    const none = await run(request(), { candidates: [] });
    expect(none.answer).toMatchObject({ reasons: ["NO_ACTIVE_AGREEMENT"], agreement_id: null });
  });

  it("two candidates and nothing that picks one: AGREEMENT_NOT_SELECTED, no revocation read", async () => {
    const a = await candidate();
    const r = await run(request({ intent_id: undefined }), { candidates: [a, { ...a, agreementId: "agr-2" }] });
    expect(r.answer).toMatchObject({ reasons: ["AGREEMENT_NOT_SELECTED"] });
    expect(r.reads).toEqual(["agent", "candidates"]);
  });

  it("a DENY the grant forbids is stored as a counted denial; one the spend transaction refused is not", async () => {
    const deny = await run(request({ amount: 5000 }));
    expect(deny.answer).toMatchObject({ verdict: "DENY" });
    expect(deny.writes).toEqual(["save refusal", "noted denial"]);
    expect(deny.saved[0]?.burstExempt).toBe(false);

    const raced = await run(request(), { spend: () => ({ recorded: false, reason: "CUMULATIVE_BUDGET_EXCEEDED", message: "taken meanwhile" }) });
    expect(raced.answer).toMatchObject({
      verdict: "DENY",
      reasons: ["CUMULATIVE_BUDGET_EXCEEDED"],
      intent_id: "groceries",
      messages: [{ message: "taken meanwhile" }],
    });
    expect(raced.writes).toEqual(["spend", "save refusal"]);
    expect(raced.saved[0]?.burstExempt).toBe(true);
  });

  it("too many recent denials: REVOKE through the decision log, the index marked and the agent forgotten", async () => {
    const r = await run(request({ amount: 5000 }), { recentDenials: 5 });
    expect(r.answer).toMatchObject({ svc_decision: "REVOKE" });
    expect(r.writes).toEqual(["revoke DENIED_ATTEMPT_BURST", "marked delegation del-1"]);
    expect(r.reads).toEqual(["agent", "candidates", "evidence", "find"]);
  });

  it("a retry of a stored ALLOW gets it again with its entry; another request with that action_id is ACTION_REUSED", async () => {
    const first = await run(request(), {
      spend: () => ({ recorded: false, reason: "ACTION_DECIDED", message: "decided" }),
      stored: new Map([
        [
          "act-new",
          {
            agentId: AGENT,
            actionId: "act-new",
            agreementId: "agr-1",
            requestHash: hashOf(request()),
            decision: { verdict: "ALLOW", agreement_id: "agr-1" },
            createdAt: new Date(T0),
          },
        ],
      ]),
    });
    expect(first.answer).toEqual({ verdict: "ALLOW", agreement_id: "agr-1", ledger_entry: ENTRY });
    const other = await run(request({ amount: 10 }), {
      spend: () => ({ recorded: false, reason: "ACTION_DECIDED", message: "decided" }),
      stored: first.stored,
    });
    expect(other.error).toMatchObject({ code: "ACTION_REUSED" });
  });

  it("a spend recorded while a concurrent request stored another answer first is released, and that answer returned", async () => {
    const req = request();
    const winner = {
      agentId: AGENT,
      actionId: "act-new",
      agreementId: null,
      requestHash: hashOf(req),
      decision: { verdict: "STEP_UP", reasons: ["REVOCATION_STATE_STALE"] },
      createdAt: new Date(T0),
    };
    const r = await run(req, {
      stored: new Map([["act-new", winner]]),
      spend: () => ({ recorded: true, replayed: false, entry: { ...ENTRY } as never, intentSpentMinor: 4250n, decisionStored: false }),
    });
    expect(r.answer).toEqual(winner.decision);
    expect(r.writes).toEqual(["spend", "noted spend", "release agr-1 act-new", "forgot agent"]);
    expect(r.counted).toEqual([]);
  });
});

describe("DecisionLog", () => {
  it("a spend the transaction refused keeps the approval an approved retry used, stored and answered", async () => {
    const saved: NewVerifyDecision[] = [];
    const refused: DecisionStore["spend"] = async () => ({ recorded: false, reason: "CUMULATIVE_BUDGET_EXCEEDED", message: "taken meanwhile" });
    const log = new DecisionLog({
      store: {
        spend: refused,
        saveRefusal: async (d) => (saved.push(d), { stored: true }),
      } as Partial<DecisionStore> as DecisionStore,
      upkeep: { denied: () => undefined, spent: () => undefined, changed: () => undefined, revoked: () => undefined },
      metrics: { countDecision: () => undefined },
      logSigner: () => null,
      logOptions: (now) => ({ now }),
    });
    const q = question(ORG, request(), new Date(T0));
    const allow = { verdict: "ALLOW", agent_id: AGENT, action_id: q.actionId, agreement_id: "agr-1", intent_id: "groceries", approval_id: "apr_1" };
    const out = await log.commit(q, {
      answer: allow as unknown as VerifyResponse,
      effect: { kind: "spend", spend: {} as AllowedSpend, candidate: await candidate() },
    });
    expect(out).toMatchObject({ verdict: "DENY", reasons: ["CUMULATIVE_BUDGET_EXCEEDED"], intent_id: "groceries", approval_id: "apr_1" });
    expect(saved[0]?.decision).toMatchObject({ verdict: "DENY", approval_id: "apr_1" });
  });
});
