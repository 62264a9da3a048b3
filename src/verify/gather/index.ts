/**
 * Gather: everything a verify reads before it decides, behind one interface, so the decision
 * (../pipeline/decide.ts) is pure and verifyAction (../verify-action.ts) can be run with fakes.
 *
 * The reads, in the order verifyAction asks for them (each only when the steps before left the
 * answer open): the revocation index's state (memory); the agent's snapshot (the candidate
 * cache, ./candidate-cache.ts: no statement when warm); its candidates prepared, with its
 * recent denials (records read only for cache misses; read afresh when the request has seen a
 * longer ledger); when no candidate is selected, the revocation that explains it (one
 * statement); and for the selected candidate its evidence: the agreement with its
 * acknowledgement domains' published keys applied, the delegation (a sub-delegation with its
 * chain as stored: one statement, ../pipeline/stored-chain.ts; none: the agreement's implicit
 * one), and the rates the evaluation needs (only when a currency differs).
 *
 * The other half, `GatherUpkeep`, is what the decision log (../commit/decision-log.ts) tells
 * the gather side after it committed: a denial stored, a spend recorded, a write that lowers a
 * total, a revocation made.
 */
import type { Pool } from "pg";
import { prepareDelegation, type PreparedDelegationWithProblems } from "../../core/delegation/index.js";
import type { Action, EvalContext, PreparedAgreement, RevocationView } from "../../core/evaluate/index.js";
import { type AgentForVerify, revokedCause, type RevokedCause } from "../../store/index.js";
import type { VerifyCandidate } from "../caches/candidates.js";
import type { AckDomainDirectory } from "../pipeline/ack-domains.js";
import { implicitDelegation } from "../pipeline/implicit-delegation.js";
import { ratesFor, type RateLookup } from "../pipeline/rates.js";
import { withStoredAncestors } from "../pipeline/stored-chain.js";
import type { RevocationIndex } from "../revocation/index.js";
import type { AgentCandidates, AgentSnapshot, CandidateCache, SpendNote } from "./candidate-cache.js";

/** What the decision is made on, for the selected candidate. */
export interface Evidence {
  /** The agreement with its acknowledgement domains applied. */
  agreement: PreparedAgreement;
  /** The delegation judged: stored chain, or the agreement's implicit one. */
  delegation: PreparedDelegationWithProblems;
  /** The rates the evaluation needs; undefined when no currency differs. */
  rate?: EvalContext["rate"];
  /** Revocations as the index knows them now. */
  revocations: RevocationView;
  /** The index is stale now. */
  revocationStateStale: boolean;
}

/** The reads of a verify (see the module comment). */
export interface Gather {
  /** Why revocation state is stale now (verify steps up), or undefined when it is fresh. */
  staleness(): string | undefined;
  /** The agent's snapshot (its `agent` undefined when none is registered). */
  agent(agentId: string, nowMs: number): Promise<{ readonly agent?: AgentForVerify }>;
  /** The agent's candidates, prepared, and its recent denials (`seenSequence`: the request's `ledger_sequence`). */
  candidates(agentId: string, snapshot: { readonly agent?: AgentForVerify }, nowMs: number, seenSequence?: number): Promise<AgentCandidates>;
  /** The revocation that explains why the agent (of tenant `orgId`) has no live agreement, if one does. */
  revokedCause(agentId: string, orgId: string, agreementId?: string): Promise<RevokedCause | undefined>;
  /** The evidence the selected `candidate` is evaluated on. */
  evidence(candidate: VerifyCandidate, agentId: string, action: Action, now: Date): Promise<Evidence>;
}

/** What the decision log tells the gather side after it committed. */
export interface GatherUpkeep {
  /** A counted denial of `agentId` was stored at `atMs`. */
  denied(agentId: string, atMs: number): void;
  /** A spend of `agentId` was recorded. */
  spent(agentId: string, note: SpendNote): void;
  /** A write of this process lowered a total or changed the candidates of `agentId`: read it afresh next time. */
  changed(agentId: string): void;
  /** Records of organization `org` were revoked (delegations, or agreements without one) on the verify path. */
  revoked(agentId: string, org: string | null, kind: "delegation" | "agreement", ids: readonly string[]): void;
}

/** The revocation index as verify uses it. */
export type VerifyRevocationIndex = Pick<RevocationIndex, "stale" | "scoped" | "markDelegationRevoked" | "markAgreementRevoked"> & {
  /** Why the index is stale (the LISTEN path or the Kubernetes watch), when it can say. */
  staleReason?(): string | undefined;
};

/** What StoreGather reads with. */
export interface StoreGatherDeps {
  pool: Pool;
  index: VerifyRevocationIndex;
  candidates: CandidateCache;
  ackDomains: Pick<AckDomainDirectory, "apply">;
  /** Units of `to` per one `from` on a day, as of the verify's `now`. */
  rate: (from: string, to: string, day: string, now: Date) => ReturnType<RateLookup>;
}

const STALE_DEFAULT = "revocation updates have not been received within their bound";

/** The gather side on Postgres and the process's caches. */
export class StoreGather implements Gather, GatherUpkeep {
  constructor(private readonly d: StoreGatherDeps) {}

  staleness(): string | undefined {
    return this.d.index.stale() ? (this.d.index.staleReason?.() ?? STALE_DEFAULT) : undefined;
  }

  agent(agentId: string, nowMs: number): Promise<AgentSnapshot> {
    return this.d.candidates.agent(this.d.pool, agentId, nowMs);
  }

  candidates(agentId: string, snapshot: AgentSnapshot, nowMs: number, seenSequence?: number): Promise<AgentCandidates> {
    return this.d.candidates.candidates(this.d.pool, agentId, snapshot, nowMs, seenSequence);
  }

  revokedCause(agentId: string, orgId: string, agreementId?: string): Promise<RevokedCause | undefined> {
    return revokedCause(this.d.pool, agentId, orgId, agreementId);
  }

  async evidence(c: VerifyCandidate, agentId: string, action: Action, now: Date): Promise<Evidence> {
    const agreement = await this.d.ackDomains.apply(c.agreement, c.revision);
    // A sub-delegation is judged by the delegations its chain cites as stored (../pipeline/stored-chain.ts).
    const delegation = c.delegation
      ? c.delegation.delegation.delegation_chain.length > 0
        ? await withStoredAncestors(this.d.pool, this.d.candidates.records, c.delegation)
        : c.delegation
      : prepareDelegation(implicitDelegation(c.agreement.agreement, agentId));
    const rate = await ratesFor(agreement, delegation, action, (from, to, day) => this.d.rate(from, to, day, now), now.getTime());
    // Revocations as the index holds them in the records' organizations (the delegation's chain links are of its organization).
    const revocations = this.d.index.scoped(c.orgId, c.row.delegation ? c.row.delegation.orgId : c.orgId);
    return { agreement, delegation, ...(rate ? { rate } : {}), revocations, revocationStateStale: this.d.index.stale() };
  }

  denied(agentId: string, atMs: number): void {
    this.d.candidates.noteDenial(agentId, atMs);
  }

  spent(agentId: string, note: SpendNote): void {
    this.d.candidates.noteSpend(agentId, note);
  }

  changed(agentId: string): void {
    this.d.candidates.forget(agentId);
  }

  revoked(agentId: string, org: string | null, kind: "delegation" | "agreement", ids: readonly string[]): void {
    for (const id of ids) {
      if (kind === "delegation") this.d.index.markDelegationRevoked(org, id);
      else this.d.index.markAgreementRevoked(org, id);
    }
    // Its candidates changed: the next verify reads them, rather than wait for Postgres's change notice.
    if (ids.length > 0) this.d.candidates.forget(agentId);
  }
}
