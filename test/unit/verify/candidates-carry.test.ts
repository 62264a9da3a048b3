import { describe, expect, it } from "vitest";
import type { HashString } from "../../../src/core/canonical/index.js";
import { splitAgreement } from "../../../src/store/agreements.js";
import type { ActiveAgreementRow } from "../../../src/store/agreements-read.js";
import type { Queryable } from "../../../src/store/pool.js";
import { carryPrepared, prepareCandidates } from "../../../src/verify/caches/candidates.js";
import { RecordCache } from "../../../src/verify/caches/record-cache.js";
import { agreement, delegation, T0 } from "../../fixtures/records.js";

// Every record is in the cache: a statement would be a bug.
const noDb = { query: () => Promise.reject(new Error("no statement expected")) } as unknown as Queryable;
const HEAD = `sha256:${"ab".repeat(32)}` as HashString;

async function setup() {
  const a = await agreement();
  const d = delegation(a);
  const cache = new RecordCache();
  await cache.agreement(a.agreement_id, 3, () => splitAgreement(a).record);
  await cache.delegation(d.delegation_id, 2, () => d);
  const row: ActiveAgreementRow = {
    agreementId: a.agreement_id, revision: 3, status: "active", agentId: a.mandates[0]?.agent.agent_id ?? "agent", orgId: null,
    ledgerSequence: 0, ledgerHead: undefined, spent: new Map(),
    delegation: { delegationId: d.delegation_id, generation: 2, currency: "USD", spentMinor: 0n },
  };
  const intent = a.mandates[0]?.intent_id as string;
  // A spend of this process: the row's totals and ledger state move, nothing else.
  const spent = (from: ActiveAgreementRow, over: Partial<ActiveAgreementRow> = {}): ActiveAgreementRow => ({
    ...from, ledgerSequence: from.ledgerSequence + 1, ledgerHead: HEAD, spent: new Map([[intent, 500n]]),
    delegation: { ...(from.delegation as NonNullable<ActiveAgreementRow["delegation"]>), spentMinor: 500n }, ...over,
  });
  return { cache, row, spent, intent };
}

describe("carryPrepared", () => {
  it("gives the row a spend made the candidate a preparation from the cache gives, without using the cache", async () => {
    const t = await setup();
    await prepareCandidates(noDb, t.cache, [t.row], { now: T0 });
    const next = t.spent(t.row);
    carryPrepared(t.row, next);
    const hits = t.cache.stats().hits;
    const [carried] = await prepareCandidates(noDb, t.cache, [next], { now: T0 + 5 });
    expect(t.cache.stats().hits).toBe(hits);
    // The same row's contents in a new object: prepared from the cache.
    const [fresh] = await prepareCandidates(noDb, t.cache, [{ ...next }], { now: T0 + 5 });
    expect(t.cache.stats().hits).toBe(hits + 2);
    expect(carried?.row).toBe(next);
    // Alike but for the record's ledger_as_of text, which a kept candidate keeps from its
    // preparation (verify reads the time from ledgerAsOfMs, stamped on every use).
    const plain = (c: typeof fresh) => ({ ...c, row: undefined, agreement: { ...c?.agreement, agreement: { ...c?.agreement.agreement, ledger_as_of: undefined } } });
    expect(plain(carried)).toEqual(plain(fresh));
    expect(carried?.agreement.agreement.ledger_as_of).toBe(new Date(T0).toISOString());
    expect(carried?.agreement.mandates.find((m) => m.mandate.intent_id === t.intent)?.spentMinor).toBe(500n);
    expect(carried?.agreement.ledgerSequence).toBe(1);
    expect(carried?.agreement.agreement.ledger_head).toBe(HEAD);
    expect(carried?.delegationSpentMinor).toBe(500n);
    expect(carried?.agreement.ledgerAsOfMs).toBe(T0 + 5);
  });

  it("carries nothing to a row of another revision or delegation generation, or from a row never prepared", async () => {
    const t = await setup();
    await prepareCandidates(noDb, t.cache, [t.row], { now: T0 });
    for (const over of [{ revision: 4 }, { delegation: { delegationId: t.row.delegation?.delegationId ?? "", generation: 3, currency: "USD", spentMinor: 0n } }]) {
      const next = t.spent(t.row, over);
      carryPrepared(t.row, next);
      // Not kept: preparing it looks the records up (and, uncached, reads them: here, the stub refuses).
      await expect(prepareCandidates(noDb, t.cache, [next], { now: T0 })).rejects.toThrow("no statement expected");
    }
    const unprepared = { ...t.row };
    const next = t.spent(unprepared);
    carryPrepared(unprepared, next);
    const hits = t.cache.stats().hits;
    await prepareCandidates(noDb, t.cache, [next], { now: T0 });
    expect(t.cache.stats().hits).toBe(hits + 2);
  });
});
