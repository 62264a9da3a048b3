/**
 * The Citus layout step (src/store/citus.ts) as plain Postgres and `WRIT_CITUS` see it: without
 * the `citus` extension, or with `off`, it only looks (one query) and changes nothing. The
 * layout on a real cluster: test/integration/citus.test.ts.
 */
import type { ClientBase } from "pg";
import { describe, expect, it } from "vitest";
import { applyCitusLayout, CITUS_REFERENCE_TABLES, citusModeFromEnv } from "../../src/store/citus.js";

/** A client that answers the extension look-up with `version` and records every statement. */
function fakeClient(version: string | null): { client: ClientBase; statements: string[] } {
  const statements: string[] = [];
  const client = {
    query: async (sql: string) => {
      statements.push(sql);
      if (sql.includes("pg_extension")) return { rows: [{ v: version }], rowCount: 1 };
      if (sql.includes("citus_is_coordinator")) return { rows: [{ c: true }], rowCount: 1 };
      return { rows: [], rowCount: 0 };
    },
  } as unknown as ClientBase;
  return { client, statements };
}

describe("WRIT_CITUS", () => {
  it("is auto when unset or empty, auto or off as written, and refuses anything else naming the variable", () => {
    expect(citusModeFromEnv({})).toBe("auto");
    expect(citusModeFromEnv({ WRIT_CITUS: "" })).toBe("auto");
    expect(citusModeFromEnv({ WRIT_CITUS: " auto " })).toBe("auto");
    expect(citusModeFromEnv({ WRIT_CITUS: "off" })).toBe("off");
    expect(() => citusModeFromEnv({ WRIT_CITUS: "on" })).toThrow('WRIT_CITUS must be auto or off, not "on"');
  });
});

describe("the Citus layout", () => {
  it("does nothing on plain Postgres (no citus extension): one look-up, no change", async () => {
    const { client, statements } = fakeClient(null);
    expect(await applyCitusLayout(client, "auto")).toEqual({ citus: null, coordinator: false, madeReference: [], distributed: [] });
    expect(statements).toHaveLength(1);
  });

  it("does nothing on a Citus coordinator when WRIT_CITUS is off", async () => {
    const { client, statements } = fakeClient("13.2-1");
    expect(await applyCitusLayout(client, "off")).toEqual({ citus: "13.2-1", coordinator: false, madeReference: [], distributed: [] });
    expect(statements).toHaveLength(1);
  });

  it("makes the reference tables in one transaction on a coordinator", async () => {
    const { client, statements } = fakeClient("13.2-1");
    expect((await applyCitusLayout(client, "auto")).madeReference).toEqual([...CITUS_REFERENCE_TABLES]);
    expect(statements.filter((s) => s.includes("create_reference_table"))).toHaveLength(CITUS_REFERENCE_TABLES.length);
    expect(statements.at(-1)).toBe("COMMIT");
  });
});
