/**
 * The revocation index on real Postgres: revocations reach it over LISTEN/NOTIFY from another
 * connection within a second, it catches up from the tables after its connection is killed,
 * and it reports stale while it is down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Delegation } from "../../src/core/delegation/index.js";
import { hashOf } from "../../src/core/canonical/index.js";
import { revokeAgreement, upsertAgreement } from "../../src/store/agreements.js";
import { revokeDelegation, upsertDelegation } from "../../src/store/delegations.js";
import { notifyRevocation } from "../../src/store/notify.js";
import { withTransaction } from "../../src/store/pool.js";
import { RevocationChannel, RevocationIndex } from "../../src/verify/index.js";
import { AGENT, agreement, delegation, T0 } from "../fixtures/records.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const at = new Date(T0);
const acts = { reason: "principal revoked", by: "principal", at };

function chainOf(top: Delegation, ids: string[]): Delegation[] {
  const out = [top];
  for (const id of ids) {
    const parent = out[out.length - 1] as Delegation;
    out.push({
      ...parent,
      delegation_id: id,
      agent: { agent_id: `agent-${id}` },
      delegation_chain: [
        ...parent.delegation_chain,
        {
          delegation_id: parent.delegation_id,
          delegator: { type: "agent", id: parent.delegation_chain.at(-1)?.delegate.agent_id ?? "x" },
          delegate: { agent_id: parent.agent.agent_id },
          delegated_at: parent.granted_at,
          expires_at: parent.expires_at,
          scope: parent.scope,
        },
      ],
    });
  }
  return out;
}

async function until(cond: () => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - start;
}

describe("RevocationIndex", () => {
  it("loads what is revoked at start, then learns a subtree revocation from another connection within 1 s", async () => {
    const [top, ...below] = chainOf(delegation(undefined, { delegation_id: "n-top" }), ["n-1", "n-2", "n-3"]);
    for (const d of [top as Delegation, ...below]) await withTransaction(db.pool, (c) => upsertDelegation(c, d));
    await withTransaction(db.pool, (c) => upsertDelegation(c, delegation(undefined, { delegation_id: "n-before", delegation_chain: [] })));
    await withTransaction(db.pool, (c) => revokeDelegation(c, null, "n-before", acts));

    const channel = new RevocationChannel({ connection: db.url });
    const index = new RevocationIndex({ db: db.pool, source: channel });
    try {
      expect(index.stale()).toBe(true);
      await index.start();
      expect(index.stale()).toBe(false);
      expect(index.isDelegationRevoked(null, "n-before")).toBe(true);
      expect(index.isDelegationRevoked(null, "n-2")).toBe(false);

      const started = performance.now();
      await withTransaction(db.pool, (c) => revokeDelegation(c, null, "n-1", acts));
      const took = await until(() => index.isDelegationRevoked(null, "n-3"), 1000);
      expect(took).toBeLessThan(1000);
      expect(performance.now() - started).toBeLessThan(1000);
      expect(["n-1", "n-2", "n-3"].every((id) => index.isDelegationRevoked(null, id))).toBe(true);
      expect(index.isDelegationRevoked(null, "n-top")).toBe(false);

      // Agreements: revoked here, and the revocation feed's notices.
      await withTransaction(db.pool, async (c) => {
        await upsertAgreement(c, { ...(await agreement()), agreement_id: "n-agr" });
      });
      await withTransaction(db.pool, (c) => revokeAgreement(c, AGENT, "n-agr", acts));
      await notifyRevocation(db.pool, {
        sequence: 7,
        revocation_id: hashOf("n"),
        agreement_id: "n-pushed",
        mandate_hash: hashOf("m"),
        at: "2026-01-01T00:00:00Z",
      });
      await until(() => index.isAgreementRevoked(null, "n-agr") && index.isAgreementRevoked(null, "n-pushed"), 1000);
    } finally {
      await index.stop();
    }
  });

  it("is stale while its connection is down, and catches up from the tables after it reconnects", async () => {
    const channel = new RevocationChannel({ connection: db.url, minBackoffMs: 600, maxBackoffMs: 600 });
    const index = new RevocationIndex({ db: db.pool, source: channel, staleAfterMs: 100 });
    let disconnects = 0;
    channel.on("disconnected", () => disconnects++);
    try {
      await index.start();
      expect(index.stale()).toBe(false);
      const pid = channel.backendPid;
      expect(pid).toBeTypeOf("number");
      await withTransaction(db.pool, (c) => upsertDelegation(c, delegation(undefined, { delegation_id: "k-missed", delegation_chain: [] })));

      const { rows } = await db.pool.query<{ ok: boolean }>("SELECT pg_terminate_backend($1::int) AS ok", [pid]);
      expect(rows[0]?.ok).toBe(true);
      await until(() => disconnects > 0, 2000);
      // Revoked while nobody listens: the NOTIFY is lost.
      await withTransaction(db.pool, (c) => revokeDelegation(c, null, "k-missed", acts));
      await until(() => index.stale(), 1000);
      expect(index.isDelegationRevoked(null, "k-missed")).toBe(false);

      await until(() => !index.stale(), 5000);
      expect(index.isDelegationRevoked(null, "k-missed")).toBe(true);
      expect(channel.backendPid).not.toBe(pid);
    } finally {
      await index.stop();
    }
  });

  it("keeps direct marks (the Kubernetes watch) and never unmarks", async () => {
    const index = new RevocationIndex({ db: db.pool, source: new RevocationChannel({ connection: db.url }) });
    try {
      await index.start();
      index.markDelegationRevoked(null, "w-1");
      index.markAgreementRevoked(null, "w-a");
      await index.reload();
      expect(index.isDelegationRevoked(null, "w-1")).toBe(true);
      expect(index.isAgreementRevoked(null, "w-a")).toBe(true);
    } finally {
      await index.stop();
    }
  });
});
