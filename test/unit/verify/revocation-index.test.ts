import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { QueryResult, QueryResultRow } from "pg";
import type { Queryable } from "../../../src/store/pool.js";
import type { RevocationSource, RevocationSourceEvents } from "../../../src/store/revocation/channel.js";
import { RevocationIndex } from "../../../src/verify/revocation/index.js";

/** A source driven by the test. */
class FakeSource extends EventEmitter<RevocationSourceEvents> implements RevocationSource {
  async start(): Promise<void> {
    this.emit("connected", { reconnect: false });
  }
  async stop(): Promise<void> {}
}

/** Answers the two reads of a load from in-memory tables; `fail` makes the next `fail` loads throw. */
class FakeDb implements Queryable {
  delegations: string[] = [];
  agreements: string[] = [];
  fail = 0;
  async query<R extends QueryResultRow>(text: string): Promise<QueryResult<R>> {
    const delegations = text.includes("delegation_revocations");
    if (delegations && this.fail > 0) {
      this.fail--;
      throw new Error("connection refused");
    }
    const rows = delegations ? this.delegations.map((delegation_id) => ({ delegation_id })) : this.agreements.map((agreement_id) => ({ agreement_id }));
    return { rows: rows as unknown as R[], rowCount: rows.length, command: "SELECT", oid: 0, fields: [] };
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(opts: { staleAfterMs?: number } = {}) {
  let now = 1_000;
  const source = new FakeSource();
  const db = new FakeDb();
  const index = new RevocationIndex({ db, source, staleAfterMs: opts.staleAfterMs ?? 100, reloadRetryMs: 1, clock: () => now });
  return { source, db, index, advance: (ms: number) => (now += ms) };
}

describe("RevocationIndex", () => {
  it("is stale until the first load, then answers from the tables", async () => {
    const { db, index } = setup();
    db.delegations = ["d-1"];
    db.agreements = ["a-1"];
    expect(index.stale()).toBe(true);
    await index.start();
    expect(index.stale()).toBe(false);
    expect(index.isDelegationRevoked(null, "d-1")).toBe(true);
    expect(index.isAgreementRevoked(null, "a-1")).toBe(true);
    expect(index.isDelegationRevoked(null, "a-1")).toBe(false);
  });

  it("applies announcements and marks, once, and emits only what is new", async () => {
    const { source, index } = setup();
    await index.start();
    const seen: unknown[] = [];
    index.on("revoked", (a) => seen.push(a));
    source.emit("revoked", { kind: "delegation", org: "", ids: ["d-1", "d-2"] });
    source.emit("revoked", { kind: "delegation", org: "", ids: ["d-2", "d-3"] });
    index.markAgreementRevoked(null, "a-9");
    index.markAgreementRevoked(null, "a-9");
    expect(seen).toEqual([
      { kind: "delegation", org: "", ids: ["d-1", "d-2"] },
      { kind: "delegation", org: "", ids: ["d-3"] },
      { kind: "agreement", org: "", ids: ["a-9"] },
    ]);
    expect(index.size).toEqual({ delegations: 3, agreements: 1 });
  });

  it("turns stale only after the source has been down longer than the bound, and clears after the catch-up load", async () => {
    const { source, db, index, advance } = setup({ staleAfterMs: 100 });
    await index.start();
    source.emit("disconnected", { error: new Error("gone"), retryInMs: 50 });
    advance(100);
    expect(index.stale()).toBe(false);
    advance(1);
    expect(index.stale()).toBe(true);
    db.delegations = ["missed"];
    db.fail = 2; // the catch-up load fails twice, then succeeds
    const failures: Error[] = [];
    index.on("failure", (e) => failures.push(e));
    source.emit("connected", { reconnect: true });
    await tick();
    expect(index.stale()).toBe(true);
    await new Promise((r) => setTimeout(r, 30));
    expect(failures).toHaveLength(2);
    expect(index.stale()).toBe(false);
    expect(index.isDelegationRevoked(null, "missed")).toBe(true);
  });

  it("does not count a load as catch-up when the source dropped again meanwhile", async () => {
    const { source, index, advance } = setup();
    await index.start();
    source.emit("disconnected", { error: new Error("gone"), retryInMs: 1 });
    source.emit("connected", { reconnect: true });
    source.emit("disconnected", { error: new Error("gone again"), retryInMs: 1 });
    await tick();
    await tick();
    advance(1000);
    expect(index.stale()).toBe(true);
  });

  it("never forgets a revocation on reload", async () => {
    const { db, index } = setup();
    db.delegations = ["d-1"];
    await index.start();
    db.delegations = [];
    await index.reload();
    expect(index.isDelegationRevoked(null, "d-1")).toBe(true);
  });

  it("holds an id within its organization: one organization's revocation never revokes another's record under the same id", async () => {
    const { source, index } = setup();
    await index.start();
    source.emit("revoked", { kind: "delegation", org: "org_a", ids: ["del-1"] });
    index.markAgreementRevoked("org_a", "agr-1");
    expect(index.isDelegationRevoked("org_a", "del-1")).toBe(true);
    expect(index.isDelegationRevoked("org_b", "del-1")).toBe(false);
    expect(index.isDelegationRevoked(null, "del-1")).toBe(false);
    expect(index.isAgreementRevoked("org_b", "agr-1")).toBe(false);
    // An evaluation's view: its agreement's and its delegation's organization.
    expect(index.scoped("org_b").isDelegationRevoked("del-1")).toBe(false);
    expect(index.scoped("org_b").isAgreementRevoked("agr-1")).toBe(false);
    expect(index.scoped("org_a").isDelegationRevoked("del-1")).toBe(true);
    expect(index.scoped("org_a").isAgreementRevoked("agr-1")).toBe(true);
  });
});
