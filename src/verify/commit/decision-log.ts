/**
 * Commit: the decision log of verify. Every decision goes through `commit`, which carries out
 * its one effect (../pipeline/decide.ts) and owns what makes verify idempotent: the request
 * hash, the replay of a stored answer, the burst flag of a stored refusal, and the release of
 * a spend that lost the race to another answer.
 *
 * Promises (docs/verify.md):
 * - Never an ALLOW unless its ledger entry committed: a spend refusal becomes a DENY with its
 *   reason (not counted toward DENIED_ATTEMPT_BURST: a race lost under the ledger lock, which
 *   the agent could not see), and an ALLOW carries `ledger_entry` {sequence, entry_hash}.
 * - One answer per (agent, action_id): every decision except a stale-index STEP_UP is stored
 *   (an ALLOW in the spend's own transaction, a refusal in the refusals' group commit, a
 *   REVOKE with its revocation); a retry with the same request hash gets the stored answer
 *   and spends nothing; a different request with that action_id is refused (ACTION_REUSED).
 *   An ALLOW's request hash is also kept with its ledger entry, so after its stored answer was
 *   pruned (retention) a different request that would be ALLOWed is still refused (from the
 *   spend transaction) and the same one answered with its entry. A stored ALLOW is answered
 *   again only while its entry still counts (else ACTION_RELEASED).
 * - If a concurrent request with that action_id stored its answer first, a spend just
 *   recorded for this one is released (outcome `failed`) and the stored answer is returned.
 * - Only answers decided by this request are counted in the metrics (not replays).
 * - Every answer to the retry of an approved request names its approval (`approval_id`), a
 *   refusal of its spend and a DENY stored in place of its STEP_UP included.
 */
import type { Pool } from "pg";
import type { HashString } from "../../core/canonical/index.js";
import type { Signer } from "../../core/jose/index.js";
import {
  allowedActionOf,
  recordOutcome,
  type AllowedAction,
  type AllowedSpend,
  type SpendResult,
  type LogAppendOptions,
  RecordStoreError,
  findVerifyDecision,
  saveVerifyDecision,
  type NewVerifyDecision,
  type SavedRefusal,
  type StoredVerifyDecision,
} from "../../store/index.js";
import type { GatherUpkeep } from "../gather/index.js";
import type { VerifyMetrics } from "../metrics.js";
import { refusalAnswer, VerifyError, type Decided, type Effect, type Question } from "../pipeline/decide.js";
import type { VerifyResponse } from "../pipeline/request.js";
import { revokeByPolicy, type PolicyRevoke } from "../pipeline/revoke.js";
import { recordSpend, type RefusalQueue, type SpendQueue } from "./queues.js";

/** The writes and reads of the decision log (`storeDecisions` on Postgres; fakes in tests). */
export interface DecisionStore {
  /** The decision stored for (agent, action), or undefined. */
  find(agentId: string, actionId: string): Promise<StoredVerifyDecision | undefined>;
  /** Stores a decision unless one exists (`stored` false: the one stored first). */
  save(d: NewVerifyDecision): Promise<{ stored: boolean; decision: StoredVerifyDecision }>;
  /** Stores a refusal (group commit). */
  saveRefusal(d: NewVerifyDecision): Promise<SavedRefusal>;
  /** Records an ALLOW's spend with its answer (group commit); rejects with SPEND_INVALID for a malformed one. */
  spend(s: AllowedSpend): Promise<SpendResult>;
  /** The ledger entry of an allowed action, and whether it was released since. */
  allowedAction(agentId: string, agreementId: string, actionId: string): Promise<AllowedAction | undefined>;
  /** Releases an allowed action's amount (outcome `failed`). */
  release(agreementId: string, actionId: string, at: string): Promise<unknown>;
  /** The service's REVOKE decision with its answer, in one transaction. */
  revoke(p: PolicyRevoke): ReturnType<typeof revokeByPolicy>;
}

/** The decision store on Postgres, with the refusals' and spends' group commits (./queues.ts). */
export function storeDecisions(pool: Pool, queues: { refusals: Pick<RefusalQueue, "add">; spends: Pick<SpendQueue, "add"> }): DecisionStore {
  return {
    find: (agentId, actionId) => findVerifyDecision(pool, agentId, actionId),
    save: (d) => saveVerifyDecision(pool, d),
    saveRefusal: (d) => queues.refusals.add(d),
    spend: (s) => recordSpend(queues.spends, s),
    allowedAction: (agentId, agreementId, actionId) => allowedActionOf(pool, agentId, agreementId, actionId),
    release: (agreementId, actionId, at) => recordOutcome(pool, { agreementId, actionId, outcome: "failed", at }),
    revoke: (p) => revokeByPolicy(pool, p),
  };
}

/** What the decision log writes with. */
export interface DecisionLogDeps {
  store: DecisionStore;
  /** The gather side's caches and revocation index, told what was committed. */
  upkeep: GatherUpkeep;
  metrics: Pick<VerifyMetrics, "countDecision">;
  /** Signs the log entry of a REVOKE; null: revoked and alerted, not logged. */
  logSigner: () => Signer | null;
  /** Options of the log append of a REVOKE at `now`. */
  logOptions: (now: Date) => LogAppendOptions;
  /** The approvals stage (../approvals.ts): a stored STEP_UP of an approval gives way to its request's final answer. */
  approvals?: { replacesStepUp(stored: StoredVerifyDecision, hash: HashString): Promise<boolean> };
}

type Spend = Extract<Effect, { kind: "spend" }>;
type Revoke = Extract<Effect, { kind: "revoke" }>;

/** The decision log (see the module comment). */
export class DecisionLog {
  constructor(private readonly d: DecisionLogDeps) {}

  /** Commits `decided` for `q` and gives the answer (or throws its VerifyError). */
  async commit(q: Question, decided: Decided): Promise<VerifyResponse> {
    if ("error" in decided) {
      const earlier = decided.replay ? await this.d.store.find(q.agentId, q.actionId) : undefined;
      if (earlier) return this.replay(q, earlier);
      throw decided.error;
    }
    const { answer, effect } = decided;
    switch (effect.kind) {
      case "none":
        return this.counted(answer);
      case "refusal":
        return this.refuse(q, answer, effect.burstExempt);
      case "revoke":
        return this.revoke(q, answer, effect);
      case "spend":
        return this.spend(q, answer, effect);
    }
  }

  /** The stored answer to a retry (an ALLOW with its ledger entry), or ACTION_REUSED / ACTION_RELEASED. */
  private async replay(q: Question, stored: StoredVerifyDecision): Promise<VerifyResponse> {
    if (stored.requestHash !== q.hash) throw reusedError(q);
    const body = stored.decision as unknown as VerifyResponse;
    if (body.verdict === "ALLOW" && typeof body.agreement_id === "string") {
      // An ALLOW is answered again only while its entry still counts against the budget.
      const a = await this.d.store.allowedAction(q.agentId, body.agreement_id, q.actionId);
      if (!a || a.released) throw released(q, body.agreement_id);
      return { ...body, ledger_entry: { sequence: a.sequence, entry_hash: a.entry_hash } };
    }
    return body;
  }

  private counted(answer: VerifyResponse): VerifyResponse {
    this.d.metrics.countDecision(answer.verdict, answer.reasons);
    return answer;
  }

  /** Stores a refusal (unless another answer won) and answers it; `burstExempt`: not a counted denial. */
  private async refuse(q: Question, answer: VerifyResponse, burstExempt: boolean, again = false): Promise<VerifyResponse> {
    // Not an ALLOW: stored without waiting for the WAL flush (docs/verify.md, "Durability").
    const saved = await this.d.store.saveRefusal({
      agentId: q.agentId,
      actionId: q.actionId,
      agreementId: answer.agreement_id,
      requestHash: q.hash,
      decision: { ...answer },
      burstExempt,
    });
    if (!saved.stored) {
      // The final answer of an approval's request replaces its stored STEP_UP (../approvals.ts), once.
      // It names the approval, as every answer to an approved request's retry does.
      if (!again && this.d.approvals && (await this.d.approvals.replacesStepUp(saved.decision, q.hash)))
        return this.refuse(q, { ...answer, approval_id: saved.decision.decision.approval_id as string }, burstExempt, true);
      return this.replay(q, saved.decision);
    }
    if (!burstExempt) this.d.upkeep.denied(q.agentId, q.nowMs);
    return this.counted(answer);
  }

  /** Carries out a REVOKE decision, then answers it. */
  private async revoke(q: Question, answer: VerifyResponse, e: Revoke): Promise<VerifyResponse> {
    // A retry of an action already answered must not revoke anything.
    const earlier = await this.d.store.find(q.agentId, q.actionId);
    if (earlier) return this.replay(q, earlier);
    const out = await this.d.store.revoke({
      agentId: q.agentId,
      candidate: e.candidate,
      reason: e.reason,
      at: q.now,
      signer: this.d.logSigner(),
      logOptions: this.d.logOptions(q.now),
      decision: { actionId: q.actionId, requestHash: q.hash, body: { ...answer } },
    });
    const kind = e.candidate.delegation ? "delegation" : "agreement";
    const org = kind === "delegation" ? (e.candidate.row.delegation?.orgId ?? e.candidate.orgId) : e.candidate.orgId;
    this.d.upkeep.revoked(q.agentId, org, kind, out.revocation?.ids ?? []);
    return out.saved.stored ? this.counted(answer) : this.replay(q, out.saved.decision);
  }

  /** Records an ALLOW's spend: the ALLOW with its ledger entry, or the answer the spend transaction leads to. */
  private async spend(q: Question, answer: VerifyResponse, e: Spend): Promise<VerifyResponse> {
    let r: SpendResult;
    try {
      r = await this.d.store.spend(e.spend);
    } catch (err) {
      if (err instanceof RecordStoreError && err.code === "SPEND_INVALID")
        return this.refuse(q, { ...refusalAnswer("AMOUNT_INVALID", err.message, baseOf(answer)), ...carried(answer) }, true);
      throw err;
    }
    if (!r.recorded) return this.spendRefused(q, answer, r);
    if (!r.replayed && r.intentSpentMinor !== undefined) {
      const del = e.spend.limits?.delegation;
      this.d.upkeep.spent(q.agentId, {
        agreementId: e.candidate.agreementId,
        intentId: e.spend.intentId,
        sequence: r.entry.sequence,
        entryHash: r.entry.entry_hash,
        intentSpentMinor: r.intentSpentMinor,
        ...(del && r.delegationSpentMinor !== undefined ? { delegation: { delegationId: del.delegationId, spentMinor: r.delegationSpentMinor } } : {}),
      });
    }
    const allowed = { ...answer, ledger_entry: { sequence: r.entry.sequence, entry_hash: r.entry.entry_hash } };
    // This answer committed with its entry: no other answer exists, nothing to read back.
    if (!r.replayed && r.decisionStored) return this.counted(allowed);
    return this.settleAllowed(q, answer, allowed, e, r.replayed);
  }

  /** A spend the transaction did not record. */
  private async spendRefused(q: Question, answer: VerifyResponse, r: Extract<SpendResult, { recorded: false }>): Promise<VerifyResponse> {
    switch (r.reason) {
      case "ACTION_RELEASED":
        throw released(q, answer.agreement_id ?? "");
      case "ACTION_REUSED":
        // The ledger holds the action for another request (also after its answer was pruned), or imported it: never this one's.
        throw reusedError(q);
      case "ACTION_DECIDED": {
        // Answered before (a retry of a refusal, or a concurrent request that won): that answer again.
        const earlier = await this.d.store.find(q.agentId, q.actionId);
        if (!earlier) throw new Error("verify decision was reported stored but not found");
        return this.replay(q, earlier);
      }
      default:
        return this.refuse(q, { ...refusalAnswer(r.reason, r.message, baseOf(answer)), ...carried(answer) }, true);
    }
  }

  /** A recorded spend whose answer was not stored with it: replayed, or another answer may have won. */
  private async settleAllowed(q: Question, answer: VerifyResponse, allowed: VerifyResponse, e: Spend, replayed: boolean): Promise<VerifyResponse> {
    const agreementId = e.candidate.agreementId;
    const row = { agentId: q.agentId, actionId: q.actionId, agreementId, requestHash: q.hash, decision: { ...answer } };
    const stored = await this.d.store.find(q.agentId, q.actionId);
    if (replayed) {
      // Recorded before: the stored answer, or (a ledger imported with the record) this one.
      if (stored) return this.replay(q, stored);
      const saved = await this.d.store.save(row);
      return saved.stored ? this.counted(allowed) : this.replay(q, saved.decision);
    }
    if (!stored || (stored.requestHash === q.hash && stored.decision.verdict === "ALLOW" && stored.agreementId === agreementId)) {
      if (!stored) await this.d.store.save(row);
      return this.counted(allowed);
    }
    // A concurrent request with this action_id stored another answer first: release this spend.
    await this.d.store.release(agreementId, q.actionId, e.spend.at);
    this.d.upkeep.changed(q.agentId);
    return this.replay(q, stored);
  }
}

function baseOf(a: VerifyResponse): Pick<VerifyResponse, "agent_id" | "action_id" | "agreement_id"> {
  return { agent_id: a.agent_id, action_id: a.action_id, agreement_id: a.agreement_id };
}

/** What a refusal of an ALLOW's spend keeps of it: its intent, and the approval an approved retry used. */
function carried(a: VerifyResponse): Pick<VerifyResponse, "intent_id" | "approval_id"> {
  return { ...(a.intent_id ? { intent_id: a.intent_id } : {}), ...(a.approval_id ? { approval_id: a.approval_id } : {}) };
}

/** The refusal of a request whose action_id answered another request (or is in an imported ledger). */
export function reusedError(q: Question): VerifyError {
  return new VerifyError("ACTION_REUSED", `action_id ${q.actionId} was already used by a different request of agent ${q.agentId}`);
}

/** The refusal of a retry whose ALLOW was released since (outcome `failed`). */
function released(q: Question, agreementId: string): VerifyError {
  return new VerifyError(
    "ACTION_RELEASED",
    `action_id ${q.actionId} was allowed and then recorded as failed (or its hold released in part: voided, expired, captured for less) in the ledger of agreement ${agreementId}, which released its amount; ` +
      "it is never allowed again: send the payment as a new action with a new action_id",
  );
}
