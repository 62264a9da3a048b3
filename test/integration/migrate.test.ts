import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS_TABLE } from "../../src/store/migrate.js";
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
