/**
 * The admission webhook's lookup on a real Postgres and the controller's real revocation index:
 * an id the index does not hold costs no query (a burst of creates never waits on Postgres); a
 * revoked one is read, and reported only in a namespace bound to the organization it is stored
 * for; before the index has loaded every id is read.
 */
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admissionLookup } from "../../src/controller/admission/lookup.js";
import { revokeDelegation } from "../../src/store/delegations.js";
import { RevocationChannel } from "../../src/store/revocation/channel.js";
import { RevocationIndex } from "../../src/verify/revocation/index.js";
import { mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let index: RevocationIndex;
let revokedId: string;
const revokedAt = new Date("2026-11-22T08:00:00Z");

beforeAll(async () => {
  w = await startVerifyWorld();
  const stored = await storeAgreement(w, { mandates: [mandate(w.agentId, "i1")] });
  revokedId = stored.delegationId as string;
  await revokeDelegation(w.db.pool, w.operatorOrg, revokedId, { reason: "deleted", by: "controller", at: revokedAt });
  index = new RevocationIndex({ db: w.db.pool, source: new RevocationChannel({ connection: w.db.url }) });
});
afterAll(async () => {
  await index?.stop();
  await w?.close();
});

/** The lookup over the test database's pool, counting the statements it sends. */
function counted(idx: RevocationIndex) {
  const queries: unknown[] = [];
  const pool = { query: (text: unknown, values: unknown) => (queries.push(text), w.db.pool.query(text as string, values as unknown[])) } as unknown as Pool;
  const bindings = { labelledOrg: async (ns: string) => (ns === "bound" ? w.operatorOrg : ns === "other" ? "org_000000000000000000000000" : undefined) };
  return { lookup: admissionLookup(pool, bindings, idx), queries };
}

describe("the admission webhook's lookup of revoked ids", () => {
  it("reads every id while the index has not loaded", async () => {
    expect(index.stale()).toBe(true);
    const { lookup, queries } = counted(index);
    expect(await lookup.revoked("delegation", "del_never_stored", "bound")).toBeUndefined();
    expect(queries).toHaveLength(1);
    expect(await lookup.revoked("delegation", revokedId, "bound")).toEqual({ revokedAt, reason: "deleted" });
  });

  it("once loaded, answers an id that is not revoked from memory, without a query", async () => {
    await index.start();
    expect(index.isDelegationRevoked(w.operatorOrg, revokedId)).toBe(true);
    expect(index.isDelegationRevoked("org_000000000000000000000000", revokedId)).toBe(false);
    const { lookup, queries } = counted(index);
    expect(await lookup.revoked("delegation", "del_never_stored", "bound")).toBeUndefined();
    expect(await lookup.revoked("agreement", "agr_never_stored", "bound")).toBeUndefined();
    expect(queries).toEqual([]);
  });

  it("reads a revoked id and reports it only where the namespace is bound to its organization", async () => {
    const { lookup, queries } = counted(index);
    expect(await lookup.revoked("delegation", revokedId, "bound")).toEqual({ revokedAt, reason: "deleted" });
    expect(await lookup.revoked("delegation", revokedId, "other")).toBeUndefined();
    expect(await lookup.revoked("delegation", revokedId, "unbound")).toBeUndefined();
    // The index holds the id within its organization: for the other organization's namespace nothing is read.
    expect(queries).toHaveLength(1);
  });
});
