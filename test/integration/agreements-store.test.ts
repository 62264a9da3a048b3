/**
 * The delegation and agreement stores against real Postgres: upserts and revisions, ledgers
 * that arrive with a record (extend, never rewrite), candidates for verify, chain revocation of
 * whole subtrees, revocation finality, and the registry's counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spentByIntent, verifyLedger, withLedgerEntry, type IntentAgreement } from "../../src/core/agreement/index.js";
import type { ChainLink, Delegation } from "../../src/core/delegation/index.js";
import { agreementFacts } from "../../src/store/agent-standing.js";
import { listRevokedAgreementIds, loadActiveForAgent, loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { revokeAgreement, upsertAgreement } from "../../src/store/agreements.js";
import { listRevokedDelegationIds, loadDelegation, loadStoredChain, revokeDelegation, upsertDelegation } from "../../src/store/delegations.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import { withTransaction } from "../../src/store/pool.js";
import { recordAllowedSpend } from "../../src/store/ledger/index.js";
import { agreement, AGENT, chain, delegation, iso, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const tx = <T>(fn: Parameters<typeof withTransaction<T>>[1]) => withTransaction(db.pool, fn);
const at = new Date(T0);
const acts = () => ({ reason: "principal revoked", by: "principal", at });

function renamed(a: IntentAgreement, id: string): IntentAgreement {
  return { ...a, agreement_id: id };
}

describe("upsertAgreement", () => {
  it("stores a record, keeps its revision when re-applied unchanged, and bumps it on a change", async () => {
    const a = await agreement();
    const first = await tx((c) => upsertAgreement(c, a, { orgId: "org_a" }));
    expect(first).toMatchObject({ agreementId: "agr-1", revision: 1, created: true, changed: true, ledgerSequence: 0, ledgerAppended: 0, revoked: false });
    const again = await tx((c) => upsertAgreement(c, { ...a, ledger_as_of: iso(T0) }));
    expect(again).toMatchObject({ revision: 1, created: false, changed: false });
    const edited = await tx((c) => upsertAgreement(c, { ...a, updated_at: iso(T0 + 1) }));
    expect(edited).toMatchObject({ revision: 2, changed: true });
    const loaded = await loadAgreementWithLedger(db.pool, "agr-1", { asOf: iso(T0) });
    expect(loaded).toEqual({ ...a, updated_at: iso(T0 + 1), ledger_as_of: iso(T0) });
  });

  it("refuses a record that does not match the schema, and an unknown delegation", async () => {
    const a = await agreement();
    await expect(tx((c) => upsertAgreement(c, { ...a, mandates: [] }))).rejects.toMatchObject({ code: "RECORD_INVALID" });
    await expect(tx((c) => upsertAgreement(c, renamed(a, "agr-orphan"), { delegationId: "del-missing" }))).rejects.toMatchObject({
      code: "DELEGATION_NOT_FOUND",
    });
  });

  it("imports a ledger only with the record that creates the agreement; afterwards a declared ledger never adds, changes or releases an entry", async () => {
    const six = renamed(await agreement({ ledgerEntries: 6 }), "agr-ledger");
    // The fixture's entries are chained for agr-1; rebuild them for this id.
    let a: IntentAgreement = { ...six, ledger: [], ledger_sequence: 0 };
    delete a.ledger_head;
    for (const e of six.ledger ?? []) {
      const { sequence: _s, entry_hash: _h, prev_entry_hash: _p, ...fields } = e;
      a = withLedgerEntry(a, fields).agreement;
    }
    // A ledger that does not verify is refused, even on creation.
    const broken = { ...a, ledger: a.ledger?.map((e, i) => (i === 5 ? { ...e, amount: 99 } : e)) };
    await expect(tx((c) => upsertAgreement(c, broken))).rejects.toMatchObject({ code: "LEDGER_INVALID" });

    expect(await tx((c) => upsertAgreement(c, a))).toMatchObject({ created: true, ledgerSequence: 6, ledgerAppended: 6 });
    const stored = await loadAgreementWithLedger(db.pool, "agr-ledger");
    expect(stored?.ledger).toEqual(a.ledger);
    expect(stored?.ledger_head).toBe(a.ledger_head);
    expect(stored && verifyLedger(stored)).toEqual({ state: "ok" });
    expect(await spendTotals(db.pool, "agr-ledger")).toEqual(spentByIntent(a));
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM ledger_entries WHERE agreement_id = 'agr-ledger' AND imported");
    expect(rows[0]).toEqual({ n: 6 });

    // A shorter replica of the same history adds nothing and is not reported.
    const prefix: IntentAgreement = { ...a, ledger: a.ledger?.slice(0, 3) ?? [], ledger_sequence: 3, ledger_head: a.ledger?.[2]?.entry_hash };
    const replica = await tx((c) => upsertAgreement(c, prefix));
    expect(replica).toMatchObject({ ledgerAppended: 0, ledgerSequence: 6 });
    expect(replica.ledgerIgnored).toBeUndefined();

    // Another history of the same length, and a longer ledger, are ignored (and said so): the stored one stays.
    let forged: IntentAgreement = { ...a, ledger: a.ledger?.slice(0, 4) ?? [], ledger_sequence: 4, ledger_head: a.ledger?.[3]?.entry_hash };
    forged = withLedgerEntry(forged, { action_id: "forged", at: iso(T0), currency: "USD", outcome: "allowed", amount: 1, intent_id: "office" }).agreement;
    forged = withLedgerEntry(forged, { action_id: "forged-2", at: iso(T0), currency: "USD", outcome: "allowed", amount: 1, intent_id: "office" }).agreement;
    expect((await tx((c) => upsertAgreement(c, forged))).ledgerIgnored).toContain("differs from the stored ledger at or before sequence 6");
    let longer = a;
    for (const n of [1, 2])
      longer = withLedgerEntry(longer, { action_id: `more-${n}`, at: iso(T0), currency: "USD", outcome: "allowed", amount: 7, intent_id: "travel" }).agreement;
    const extended = await tx((c) => upsertAgreement(c, longer));
    expect(extended).toMatchObject({ changed: false, ledgerAppended: 0, ledgerSequence: 6 });
    expect(extended.ledgerIgnored).toContain("longer than the stored ledger");
    expect((await loadAgreementWithLedger(db.pool, "agr-ledger"))?.ledger).toEqual(a.ledger);
    expect(await spendTotals(db.pool, "agr-ledger")).toEqual(spentByIntent(a));

    // Spends continue the same chain.
    const r = await recordAllowedSpend(db.pool, {
      agreementId: "agr-ledger",
      intentId: "groceries",
      actionId: "live-1",
      amountMinor: 1234n,
      currency: "USD",
      at: iso(T0),
    });
    expect(r).toMatchObject({ recorded: true, entry: { sequence: 7, prev_entry_hash: a.ledger_head } });
    const after = await loadAgreementWithLedger(db.pool, "agr-ledger");
    expect(after && verifyLedger(after)).toEqual({ state: "ok" });
    expect(after && (await spendTotals(db.pool, "agr-ledger"))).toEqual(after && spentByIntent(after));
    // An imported action id is spent: a spend of it is never a replay of the imported entry.
    const importedId = a.ledger?.[0]?.action_id ?? "";
    expect(
      await recordAllowedSpend(db.pool, {
        agreementId: "agr-ledger",
        intentId: "groceries",
        actionId: importedId,
        amountMinor: 500n,
        currency: "USD",
        at: iso(T0),
      }),
    ).toMatchObject({ recorded: false, reason: "ACTION_REUSED" });
  });
});

describe("upsertDelegation and candidates", () => {
  it("stores a delegation with its embedded agreement, and loadActiveForAgent returns both with the totals", async () => {
    const a = renamed(await agreement(), "agr-bound");
    const d = delegation(a, { delegation_id: "del-bound" });
    const r = await tx((c) => upsertDelegation(c, d, { orgId: "org_b" }));
    expect(r).toMatchObject({
      delegationId: "del-bound",
      generation: 1,
      created: true,
      revoked: false,
      agreement: { agreementId: "agr-bound", created: true },
    });
    expect(await tx((c) => upsertDelegation(c, d))).toMatchObject({ generation: 1, changed: false, agreement: { changed: false } });
    const stored = await loadDelegation(db.pool, "del-bound");
    expect(stored).toMatchObject({ orgId: "org_b", agentId: AGENT, status: "active", parentDelegationId: "del-link-3", generation: 1 });
    expect(stored?.record).toEqual((({ intent_agreement: _ia, ...rest }) => rest)(d));

    await recordAllowedSpend(db.pool, { agreementId: "agr-bound", intentId: "travel", actionId: "t-1", amountMinor: 5000n, currency: "USD", at: iso(T0) });
    const rows = await loadActiveForAgent(db.pool, AGENT);
    const row = rows.find((x) => x.agreementId === "agr-bound");
    expect(row).toMatchObject({
      revision: 1,
      orgId: "org_b",
      ledgerSequence: 1,
      delegation: { delegationId: "del-bound", generation: 1, currency: "USD", spentMinor: 5000n },
    });
    expect(row?.spent.get("travel")).toBe(5000n);
    expect(row?.record?.mandates).toEqual(a.mandates);
    expect(row?.delegation?.record?.delegation_id).toBe("del-bound");
    const lean = await loadActiveForAgent(db.pool, AGENT, { records: false });
    expect(lean.find((x) => x.agreementId === "agr-bound")?.record).toBeUndefined();
  });

  it("leaves out revoked, proposed and other agents' agreements", async () => {
    const base = await agreement();
    await tx((c) => upsertAgreement(c, renamed(base, "agr-c-live"), { agentId: "agent-c" }));
    await tx((c) => upsertAgreement(c, { ...renamed(base, "agr-c-proposed"), status: "proposed" }, { agentId: "agent-c" }));
    await tx((c) => upsertAgreement(c, renamed(base, "agr-c-revoked"), { agentId: "agent-c" }));
    await tx((c) => revokeAgreement(c, "agent-c", "agr-c-revoked", { reason: "principal revoked", by: "principal", at }));
    expect((await loadActiveForAgent(db.pool, "agent-c")).map((r) => r.agreementId)).toEqual(["agr-c-live"]);
    expect(await agreementFacts(db.pool, "agent-c")).toEqual({ active_authorizations: 1, revocations: 1 });
  });
});

describe("revocation", () => {
  const sub = (d: Delegation, id: string, agent: string): Delegation => {
    const link: ChainLink = {
      delegation_id: d.delegation_id,
      delegator: { type: "agent", id: (d.delegation_chain.at(-1)?.delegate.agent_id ?? d.principal.id) as string },
      delegate: { agent_id: d.agent.agent_id },
      delegated_at: d.granted_at,
      expires_at: d.expires_at,
      scope: d.scope,
    };
    return { ...d, delegation_id: id, agent: { agent_id: agent }, delegation_chain: [...d.delegation_chain, link] };
  };

  it("revoking a link revokes every delegation below it, records every id, and keeps it final", async () => {
    const top = delegation(undefined, { delegation_id: "del-top" });
    const mid = sub(top, "del-mid", "agent-mid");
    const low = sub(mid, "del-low", "agent-low");
    const other = delegation(undefined, { delegation_id: "del-other", delegation_chain: [] });
    for (const d of [top, mid, low, other]) await tx((c) => upsertDelegation(c, d));
    const lowAgreement = renamed(await agreement(), "agr-low");
    await tx((c) => upsertAgreement(c, lowAgreement, { delegationId: "del-low", agentId: "agent-low" }));
    expect((await loadActiveForAgent(db.pool, "agent-low")).map((r) => r.agreementId)).toEqual(["agr-low"]);

    const r = await tx((c) => revokeDelegation(c, null, "del-top", { reason: "principal revoked", by: "principal", at }));
    expect(r).toEqual({ found: true, ids: ["del-low", "del-mid", "del-top"] });
    expect(await loadDelegation(db.pool, "del-low")).toMatchObject({
      status: "revoked",
      revokedReason: "principal revoked",
      revokedBy: "principal",
      generation: 2,
      record: { status: "revoked" },
    });
    expect((await loadDelegation(db.pool, "del-other"))?.status).toBe("active");
    expect(await loadActiveForAgent(db.pool, "agent-low")).toEqual([]);
    expect(await tx((c) => revokeDelegation(c, null, "del-top", { reason: "again", by: "principal", at }))).toEqual({ found: true, ids: [] });

    // Re-applying a revoked record keeps it revoked; a new delegation under a revoked link is stored revoked.
    expect(await tx((c) => upsertDelegation(c, mid))).toMatchObject({ revoked: true, changed: false });
    expect((await loadDelegation(db.pool, "del-mid"))?.status).toBe("revoked");
    expect(await tx((c) => upsertDelegation(c, sub(low, "del-late", "agent-late")))).toMatchObject({ created: true, revoked: true });
    expect(await loadDelegation(db.pool, "del-late")).toMatchObject({ status: "revoked", revokedReason: "link del-top above it is revoked" });
    expect((await listRevokedDelegationIds(db.pool)).map((r) => r.id)).toEqual(expect.arrayContaining(["del-top", "del-mid", "del-low", "del-late"]));
    expect((await listRevokedDelegationIds(db.pool)).map((r) => r.id)).not.toContain("del-other");
  });

  it("two organizations hold the same ids; a revocation (and its cascade, and a revocation before storing) reaches its organization's records only", async () => {
    const inOrg = async (org: string, agent: string) => {
      const top = delegation(undefined, { delegation_id: "del-s-top", agent: { agent_id: `${agent}-top` }, delegation_chain: [] });
      const mid = sub(top, "del-s-mid", `${agent}-mid`);
      for (const d of [top, mid]) await tx((c) => upsertDelegation(c, d, { orgId: org }));
      return { top, mid };
    };
    const a = await inOrg("org_s_a", "agent-sa");
    const b = await inOrg("org_s_b", "agent-sb");
    // One organization holds an id once: another agent of it is refused.
    const squat = delegation(undefined, { delegation_id: "del-s-top", agent: { agent_id: "agent-sa-other" }, delegation_chain: [] });
    await expect(tx((c) => upsertDelegation(c, squat, { orgId: "org_s_a" }))).rejects.toMatchObject({ code: "RECORD_INVALID" });

    const r = await tx((c) => revokeDelegation(c, "org_s_a", "del-s-top", { reason: "principal revoked", by: "principal", at }));
    expect(r).toEqual({ found: true, ids: ["del-s-mid", "del-s-top"] });
    for (const [id, agent] of [
      ["del-s-top", "agent-sb-top"],
      ["del-s-mid", "agent-sb-mid"],
    ])
      expect((await loadDelegation(db.pool, id as string, agent))?.status).toBe("active");
    expect((await loadDelegation(db.pool, "del-s-top", "agent-sa-top"))?.status).toBe("revoked");
    expect((await listRevokedDelegationIds(db.pool)).filter((x) => x.id.startsWith("del-s-"))).toEqual(
      expect.arrayContaining([
        { org: "org_s_a", id: "del-s-top" },
        { org: "org_s_a", id: "del-s-mid" },
      ]),
    );
    expect((await listRevokedDelegationIds(db.pool)).filter((x) => x.org === "org_s_b")).toEqual([]);
    // A delegation stored later under the revoked link is stored revoked in A, live in B.
    expect(await tx((c) => upsertDelegation(c, sub(a.mid, "del-s-low", "agent-sa-low"), { orgId: "org_s_a" }))).toMatchObject({ revoked: true });
    expect(await tx((c) => upsertDelegation(c, sub(b.mid, "del-s-low", "agent-sb-low"), { orgId: "org_s_b" }))).toMatchObject({ revoked: false });
    // The chain a child cites is read in its organization only.
    expect((await loadStoredChain(db.pool, "org_s_b", ["del-s-top", "del-s-mid"])).map((x) => x?.revoked)).toEqual([false, false]);
    expect((await loadStoredChain(db.pool, "org_s_a", ["del-s-top", "del-s-mid"])).map((x) => x?.revoked)).toEqual([true, true]);
    // A revocation of an id not stored yet (known as a link of B's chain) is B's: A's later record under the id stays live.
    const link = sub(b.mid, "del-s-leaf", "agent-sb-leaf");
    const below = sub(link, "del-s-below", "agent-sb-below");
    await tx((c) => upsertDelegation(c, below, { orgId: "org_s_b" }));
    expect(await tx((c) => revokeDelegation(c, "org_s_b", "del-s-leaf", { reason: "link revoked", by: "policy", at }))).toEqual({
      found: true,
      ids: ["del-s-below", "del-s-leaf"],
    });
    const fresh = delegation(undefined, { delegation_id: "del-s-fresh", agent: { agent_id: "agent-sa-fresh" }, delegation_chain: [] });
    await tx((c) => upsertDelegation(c, fresh, { orgId: "org_s_a" }));
    expect(await tx((c) => upsertDelegation(c, sub(fresh, "del-s-leaf", "agent-sa-leaf"), { orgId: "org_s_a" }))).toMatchObject({ revoked: false });
    expect((await loadDelegation(db.pool, "del-s-leaf", "agent-sa-leaf"))?.status).toBe("active");
    expect(await tx((c) => upsertDelegation(c, link, { orgId: "org_s_b" }))).toMatchObject({ revoked: true });
    expect((await loadDelegation(db.pool, "del-s-leaf", "agent-sb-leaf"))?.revokedReason).toBe("revoked before");
  });

  it("revokes by a link id that is only named inside stored chains, and reports unknown ids", async () => {
    const d = delegation(undefined, { delegation_id: "del-chained" });
    expect(chain().map((l) => l.delegation_id)).toContain("del-link-2");
    await tx((c) => upsertDelegation(c, d));
    const r = await tx((c) => revokeDelegation(c, null, "del-link-2", { reason: "link revoked", by: "policy", at }));
    expect(r.found).toBe(true);
    expect(r.ids).toEqual(expect.arrayContaining(["del-link-2", "del-chained"]));
    expect(await tx((c) => revokeDelegation(c, null, "del-nowhere", { reason: "x", by: "policy", at }))).toEqual({ found: false, ids: [] });
    expect((await listRevokedDelegationIds(db.pool)).map((r) => r.id)).not.toContain("del-nowhere");
  });

  it("never misses a child stored while its parent is being revoked", async () => {
    const parent = delegation(undefined, { delegation_id: "del-race", delegation_chain: [] });
    await tx((c) => upsertDelegation(c, parent));
    const children = Array.from({ length: 30 }, (_, i) => sub(parent, `del-race-${i}`, `agent-race-${i}`));
    await Promise.all([
      ...children.slice(0, 15).map((d) => tx((c) => upsertDelegation(c, d))),
      tx((c) => revokeDelegation(c, null, "del-race", acts())),
      ...children.slice(15).map((d) => tx((c) => upsertDelegation(c, d))),
    ]);
    const statuses = await Promise.all(children.map(async (d) => (await loadDelegation(db.pool, d.delegation_id))?.status));
    expect(new Set(statuses)).toEqual(new Set(["revoked"]));
  });

  it("a record applied with status revoked revokes itself and what is below it", async () => {
    const parent = delegation(undefined, { delegation_id: "del-selfrev", delegation_chain: [] });
    const child = sub(parent, "del-selfrev-child", "agent-child");
    await tx((c) => upsertDelegation(c, parent));
    await tx((c) => upsertDelegation(c, child));
    expect(await tx((c) => upsertDelegation(c, { ...parent, status: "revoked" }))).toMatchObject({ revoked: true, generation: 2 });
    expect((await loadDelegation(db.pool, "del-selfrev-child"))?.status).toBe("revoked");
  });

  it("agreement revocation is final and keeps the signed revocation", async () => {
    const a = renamed(await agreement(), "agr-final");
    await tx((c) => upsertAgreement(c, a));
    const revocation = {
      svc_revocation: 1 as const,
      agreement_id: "agr-final",
      mandate_hash: a.events[0]?.mandate_hash ?? ("" as never),
      at: iso(T0),
      reason: "done",
      signature: { protected: "e30", payload: "", signature: "AA" },
    };
    expect(await tx((c) => revokeAgreement(c, AGENT, "agr-final", { reason: "done", by: "principal", at, revocation }))).toEqual({
      ids: ["agr-final"],
      found: true,
    });
    expect(await tx((c) => revokeAgreement(c, AGENT, "agr-final", { reason: "again", by: "principal", at }))).toEqual({ ids: [], found: true });
    expect(await tx((c) => revokeAgreement(c, AGENT, "agr-unknown", { reason: "x", by: "principal", at }))).toEqual({ ids: [], found: false });
    const again = await tx((c) => upsertAgreement(c, a));
    expect(again.revoked).toBe(true);
    const stored = await loadAgreementWithLedger(db.pool, "agr-final");
    expect(stored).toMatchObject({ status: "revoked", revocation });
    expect((await listRevokedAgreementIds(db.pool)).map((r) => r.id)).toContain("agr-final");
  });
});
