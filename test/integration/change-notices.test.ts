/**
 * The change notices of migrations/0100_change_notify.sql, written with plain SQL (as any
 * client could), received through the RevocationChannel's `changed` event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangeNotice } from "../../src/store/changes.js";
import { parseChangeNotice } from "../../src/store/changes.js";
import { RevocationChannel } from "../../src/store/revocation/channel.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
let channel: RevocationChannel;
const got: ChangeNotice[] = [];
const ORG = `org_${"1".repeat(24)}`;
const sql = (text: string, values: unknown[] = []) => db.pool.query(text, values);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The notices that `write` causes (after a settle time for those that must not come). */
async function noticesOf(write: () => Promise<unknown>): Promise<ChangeNotice[]> {
  await sleep(30);
  got.length = 0;
  await write();
  await sleep(150);
  return [...got];
}

beforeAll(async () => {
  db = await createTestDatabase();
  channel = new RevocationChannel({ connection: db.url });
  channel.on("changed", (c) => got.push(c));
  await channel.start();
  await sql("INSERT INTO orgs (org_id, name, org_type, created_at) VALUES ($1, 'o', 'agent_operator', now())", [ORG]);
});
afterAll(async () => {
  await channel?.stop();
  await db?.drop();
});

describe("writ_changes notices", () => {
  it("parses only its two payload forms", () => {
    expect(parseChangeNotice("keys")).toEqual({ kind: "keys" });
    expect(parseChangeNotice("agent:a-1")).toEqual({ kind: "agent", agentId: "a-1" });
    for (const bad of [undefined, "", "agent:", "agents:a", "key"]) expect(parseChangeNotice(bad)).toBeUndefined();
  });

  it("announces an agent's insert and status change", async () => {
    const insert = () =>
      sql(
        `INSERT INTO agents (agent_id, org_id, principal_id, verification_level, status, public_key, fingerprint, registered_at, updated_at)
           VALUES ('ag-1', $1, 'prn_x', 'self_declared', 'active', '{}', $2, now(), now())`,
        [ORG, `sha256:${"2".repeat(64)}`],
      );
    expect(await noticesOf(insert)).toEqual([{ kind: "agent", agentId: "ag-1" }]);
    expect(await noticesOf(() => sql("UPDATE agents SET status = 'suspended' WHERE agent_id = 'ag-1'"))).toEqual([{ kind: "agent", agentId: "ag-1" }]);
  });

  it("announces agreement and delegation changes to the agents concerned, but not a spend", async () => {
    await sql(`INSERT INTO delegations (delegation_id, agent_id, principal, status, record) VALUES ('d-1', 'ag-2', '{}', 'active', '{}')`);
    const agreement = () => sql(`INSERT INTO agreements (agreement_id, delegation_id, agent_id, status, record) VALUES ('a-1', 'd-1', 'ag-2', 'active', '{}')`);
    expect(await noticesOf(agreement)).toEqual([{ kind: "agent", agentId: "ag-2" }]);
    expect(await noticesOf(() => sql("UPDATE agreements SET revision = revision + 1 WHERE agreement_id = 'a-1'"))).toEqual([
      { kind: "agent", agentId: "ag-2" },
    ]);
    // The delegation's own agent, which is the agent of every agreement bound to it (their key: migrations/0320_agent_keys.sql).
    const delegation = await noticesOf(() => sql("UPDATE delegations SET generation = generation + 1 WHERE delegation_id = 'd-1'"));
    expect(delegation).toEqual(expect.arrayContaining([{ kind: "agent", agentId: "ag-2" }]));
    // A spend: the ledger head moves and a total goes up. Nothing is announced.
    const spend = () =>
      sql(
        `WITH h AS (INSERT INTO agreement_ledger_heads (agent_id, agreement_id, ledger_sequence, ledger_head) VALUES ('ag-2', 'a-1', 1, $1)
                      ON CONFLICT (agent_id, agreement_id) DO UPDATE SET ledger_sequence = EXCLUDED.ledger_sequence, updated_at = now())
           INSERT INTO agreement_spend (agent_id, agreement_id, intent_id, currency, spent_minor) VALUES ('ag-2', 'a-1', 'i1', 'USD', 500)
           ON CONFLICT (agent_id, agreement_id, intent_id) DO UPDATE SET spent_minor = agreement_spend.spent_minor + EXCLUDED.spent_minor`,
        [`sha256:${"3".repeat(64)}`],
      );
    expect(await noticesOf(spend)).toEqual([]);
    expect(await noticesOf(spend)).toEqual([]);
    // A total that goes down (a failed payment) is announced.
    expect(await noticesOf(() => sql("UPDATE agreement_spend SET spent_minor = 100 WHERE agreement_id = 'a-1'"))).toEqual([{ kind: "agent", agentId: "ag-2" }]);
  });

  it("announces any change of API keys once per transaction, not their issue", async () => {
    const issue = () =>
      sql(`INSERT INTO api_keys (key_id, org_id, name, prefix, token_hash, scopes, created_at) VALUES ($1, $2, 'k', 'bur_abcdefgh', $3, '{verify}', now())`, [
        `key_${"4".repeat(24)}`,
        ORG,
        "5".repeat(64),
      ]);
    expect(await noticesOf(issue)).toEqual([]);
    expect(await noticesOf(() => sql("UPDATE api_keys SET revoked_at = now()"))).toEqual([{ kind: "keys" }]);
  });

  it("announces nothing for a rolled-back change", async () => {
    const rolledBack = async () => {
      const c = await db.pool.connect();
      try {
        await c.query("BEGIN");
        await c.query("UPDATE agents SET status = 'active' WHERE agent_id = 'ag-1'");
        await c.query("ROLLBACK");
      } finally {
        c.release();
      }
    };
    expect(await noticesOf(rolledBack)).toEqual([]);
  });
});
