/**
 * The candidate cache (src/verify/gather/candidate-cache.ts) without Postgres: a stand-in pool
 * answers the agent's snapshot read, the records are in its record cache. A spend of this
 * process carries the prepared candidate over to the new totals (what a preparation from the
 * record cache gives, without using it), every use is stamped with its own time, and a row
 * never prepared is prepared as usual.
 */
import type { Pool } from "pg";
import { describe, expect, it } from "vitest";
import type { HashString } from "../../../src/core/canonical/index.js";
import { splitAgreement } from "../../../src/store/agreements.js";
import { recordKey } from "../../../src/verify/caches/record-cache.js";
import { CandidateCache } from "../../../src/verify/gather/candidate-cache.js";
import { agreement, delegation, T0 } from "../../fixtures/records.js";

const HEAD = `sha256:${"ab".repeat(32)}` as HashString;
const AGENT = "agent-cc";

/** A feed that is always listening (so the cache keeps entries). */
const feed = { listening: true, on: () => feed };

async function setup() {
  const a = await agreement();
  const d = delegation(a);
  const intent = a.mandates[0]?.intent_id as string;
  let reads = 0;
  // The snapshot read (store/verify-reads.ts, readAgentSnapshot): the agent and one candidate row.
  const pool = {
    query: async () => {
      reads++;
      return {
        rows: [
          {
            g_agent_id: AGENT,
            g_org_id: "org_a",
            g_status: "active",
            g_public_key: {},
            g_fingerprint: "fp",
            denial_ages: [],
            agreement_id: a.agreement_id,
            revision: "3",
            status: "active",
            agent_id: AGENT,
            org_id: null,
            ledger_sequence: 0,
            ledger_head: null,
            spent: {},
            delegation_id: d.delegation_id,
            generation: "2",
            delegation_currency: "USD",
            delegation_spent: "0",
            delegation_mixed: false,
            evidence: null,
          },
        ],
      };
    },
  } as unknown as Pool;
  const cache = new CandidateCache({ ttlMs: 60_000 }).follow(feed);
  await cache.records.agreement(recordKey(AGENT, a.agreement_id), 3, () => splitAgreement(a).record);
  await cache.records.delegation(recordKey(AGENT, d.delegation_id), 2, () => d);
  const note = {
    agreementId: a.agreement_id,
    intentId: intent,
    sequence: 1,
    entryHash: HEAD,
    intentSpentMinor: 500n,
    delegation: { delegationId: d.delegation_id, spentMinor: 500n },
  };
  return { cache, pool, intent, note, reads: () => reads };
}

describe("CandidateCache", () => {
  it("carries the candidate a spend changed over to its new totals, without using the record cache, and stamps each use", async () => {
    const t = await setup();
    const snap = await t.cache.agent(t.pool, AGENT, T0);
    await t.cache.candidates(t.pool, AGENT, snap, T0);
    t.cache.noteSpend(AGENT, t.note);
    const hits = t.cache.records.stats().hits;
    const {
      candidates: [carried],
    } = await t.cache.candidates(t.pool, AGENT, await t.cache.agent(t.pool, AGENT, T0 + 5), T0 + 5);
    expect(t.cache.records.stats().hits).toBe(hits);
    expect(t.reads()).toBe(1);
    // The same entry read afresh: prepared from the record cache.
    const {
      candidates: [fresh],
    } = await t.cache.candidates(t.pool, AGENT, await t.cache.agent(t.pool, AGENT, T0 + 5, { fresh: true }), T0 + 5);
    expect(t.cache.records.stats().hits).toBe(hits + 2);
    // Alike but for the totals the fresh read holds (the stand-in pool still answers 0) and the
    // record's ledger_as_of text, which a kept candidate keeps from its preparation.
    const plain = (c: typeof fresh) => ({
      ...c,
      row: undefined,
      delegationSpentMinor: undefined,
      agreement: {
        ...c?.agreement,
        agreement: { ...c?.agreement.agreement, ledger_as_of: undefined, ledger_sequence: undefined, ledger_head: undefined },
        mandates: undefined,
        ledgerSequence: undefined,
        totalSpentMinor: undefined,
      },
    });
    expect(plain(carried)).toEqual(plain(fresh));
    expect(carried?.agreement.agreement.ledger_as_of).toBe(new Date(T0).toISOString());
    expect(carried?.agreement.mandates.find((m) => m.mandate.intent_id === t.intent)?.spentMinor).toBe(500n);
    expect(carried?.agreement.ledgerSequence).toBe(1);
    expect(carried?.agreement.agreement.ledger_head).toBe(HEAD);
    expect(carried?.delegationSpentMinor).toBe(500n);
    expect(carried?.agreement.ledgerAsOfMs).toBe(T0 + 5);
    expect(fresh?.agreement.ledgerSequence).toBe(0);
  });

  it("prepares a row never prepared from the record cache, and never lowers a total", async () => {
    const t = await setup();
    await t.cache.agent(t.pool, AGENT, T0);
    t.cache.noteSpend(AGENT, t.note);
    t.cache.noteSpend(AGENT, { ...t.note, sequence: 0, intentSpentMinor: 100n, delegation: { ...t.note.delegation, spentMinor: 100n } });
    const hits = t.cache.records.stats().hits;
    const {
      candidates: [c],
    } = await t.cache.candidates(t.pool, AGENT, await t.cache.agent(t.pool, AGENT, T0), T0);
    expect(t.cache.records.stats().hits).toBe(hits + 2);
    expect(c?.agreement.mandates.find((m) => m.mandate.intent_id === t.intent)?.spentMinor).toBe(500n);
    expect(c?.delegationSpentMinor).toBe(500n);
  });

  it("reads the agent afresh when the request has seen a longer ledger, and counts denials within the window", async () => {
    const t = await setup();
    const snap = await t.cache.agent(t.pool, AGENT, T0);
    t.cache.noteDenial(AGENT, T0 - 61_000);
    t.cache.noteDenial(AGENT, T0 - 1000);
    expect((await t.cache.candidates(t.pool, AGENT, await t.cache.agent(t.pool, AGENT, T0), T0, 0)).recentDenials).toBe(1);
    expect(t.reads()).toBe(1);
    await t.cache.candidates(t.pool, AGENT, snap, T0, 1);
    expect(t.reads()).toBe(2);
  });
});
