import { readdirSync } from "node:fs";
import { runner } from "node-pg-migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS_DIR, MIGRATIONS_TABLE } from "../../src/store/migrate.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await db?.drop();
});

describe("migrate", () => {
  it("applies every migration once, even when several processes start together", async () => {
    const runs = await Promise.all([migrate(db.url), migrate(db.url), migrate(db.url)]);
    const applied = runs.flat();
    expect(applied).toContain("0010_revocations");
    expect(new Set(applied).size).toBe(applied.length); // no migration ran twice
    const { rows } = await db.pool.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`);
    expect(rows.map((r) => r.name)).toEqual(applied.sort());
    expect(await migrate(db.url)).toEqual([]);
  });

  it("creates the revocations table", async () => {
    const { rows } = await db.pool.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'revocations'");
    expect(rows.map((r) => r.column_name)).toEqual(
      expect.arrayContaining(["sequence", "revocation_id", "agreement_id", "mandate_hash", "revocation", "received_at"]),
    );
  });
});

describe("0170_ledger_heads", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });
  const steps = (url: string, direction: "up" | "down", count: number) =>
    runner({ databaseUrl: url, dir: MIGRATIONS_DIR, ignorePattern: "(?!.*\\.sql$).*", migrationsTable: MIGRATIONS_TABLE, direction, count, checkOrder: true, logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });

  it("moves the heads of a database migrated before it into agreement_ledger_heads, and back on the way down", async () => {
    old = await createTestDatabase({ migrate: false });
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql")).sort();
    const before = files.indexOf("0170_ledger_heads.sql");
    expect(before).toBeGreaterThan(0);
    await steps(old.url, "up", before);
    const head = `sha256:${"a".repeat(64)}`;
    await old.pool.query(`INSERT INTO agreements (agreement_id, agent_id, status, record, ledger_sequence, ledger_head) VALUES ('a-spent', 'ag-1', 'active', '{}', 7, $1), ('a-empty', 'ag-1', 'active', '{}', 0, NULL)`, [head]);
    await steps(old.url, "up", 1);
    const heads = await old.pool.query("SELECT agreement_id, ledger_sequence, ledger_head FROM agreement_ledger_heads ORDER BY agreement_id");
    expect(heads.rows).toEqual([{ agreement_id: "a-spent", ledger_sequence: 7, ledger_head: head }]);
    const columns = await old.pool.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'agreements' AND column_name LIKE 'ledger%'");
    expect(columns.rows).toEqual([]);
    await steps(old.url, "down", 1);
    const back = await old.pool.query("SELECT agreement_id, ledger_sequence, ledger_head FROM agreements ORDER BY agreement_id");
    expect(back.rows).toEqual([{ agreement_id: "a-empty", ledger_sequence: 0, ledger_head: null }, { agreement_id: "a-spent", ledger_sequence: 7, ledger_head: head }]);
    // The spend functions of 0160 are back: they read the columns again.
    const fn = await old.pool.query<{ d: string }>("SELECT pg_get_functiondef('writ_spend_write'::regproc) AS d");
    expect(fn.rows[0]?.d).toContain("UPDATE agreements x SET ledger_sequence");
    await steps(old.url, "up", 1);
    const again = await old.pool.query("SELECT agreement_id, ledger_sequence FROM agreement_ledger_heads ORDER BY agreement_id");
    expect(again.rows).toEqual([{ agreement_id: "a-spent", ledger_sequence: 7 }]);
  });
});
