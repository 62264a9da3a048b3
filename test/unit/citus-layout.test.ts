/**
 * The Citus layout step (src/store/citus.ts) as plain Postgres and `WRIT_CITUS` see it: without
 * the `citus` extension, or with `off`, it only looks (one query) and changes nothing. The
 * layout on a real cluster: test/integration/citus.test.ts.
 */
import type { ClientBase } from "pg";
import { describe, expect, it, vi } from "vitest";
import {
  applyCitusLayout,
  CITUS_NODE_OF_TTL_MS,
  CITUS_REFERENCE_TABLES,
  CitusDirect,
  citusDirectFromEnv,
  citusModeFromEnv,
  citusNodeOf,
} from "../../src/store/citus.js";
import { decisionPartitionsFromEnv } from "../../src/store/citus-partitions.js";
import type { Pool } from "pg";

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

describe("WRIT_CITUS_DIRECT", () => {
  it("is on when unset or empty, on or off as written, and refuses anything else naming the variable", () => {
    expect(citusDirectFromEnv({})).toBe("on");
    expect(citusDirectFromEnv({ WRIT_CITUS_DIRECT: "" })).toBe("on");
    expect(citusDirectFromEnv({ WRIT_CITUS_DIRECT: " on " })).toBe("on");
    expect(citusDirectFromEnv({ WRIT_CITUS_DIRECT: "off" })).toBe("off");
    expect(() => citusDirectFromEnv({ WRIT_CITUS_DIRECT: "auto" })).toThrow('WRIT_CITUS_DIRECT must be on or off, not "auto"');
  });

  it("gives no worker pool on plain Postgres (no worker in pg_dist_node), nor for an agent whose worker is not known yet", async () => {
    const queries: string[] = [];
    const coordinator = {
      options: {},
      query: async (sql: string) => {
        queries.push(sql);
        return { rows: [], rowCount: 0 };
      },
    } as unknown as Pool;
    const direct = new CitusDirect(coordinator);
    expect(direct.poolFor("agent:a1")).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(direct.poolFor("node:1")).toBeUndefined();
    expect(queries.filter((q) => q.includes("pg_dist_node"))).toHaveLength(1);
    await direct.end();
  });
});

describe("WRIT_CITUS_DECISION_PARTITIONS", () => {
  it("is off when unset or empty, week or off as written, and refuses anything else naming the variable", () => {
    expect(decisionPartitionsFromEnv({})).toBe("off");
    expect(decisionPartitionsFromEnv({ WRIT_CITUS_DECISION_PARTITIONS: "" })).toBe("off");
    expect(decisionPartitionsFromEnv({ WRIT_CITUS_DECISION_PARTITIONS: " week " })).toBe("week");
    expect(decisionPartitionsFromEnv({ WRIT_CITUS_DECISION_PARTITIONS: "off" })).toBe("off");
    expect(() => decisionPartitionsFromEnv({ WRIT_CITUS_DECISION_PARTITIONS: "day" })).toThrow('WRIT_CITUS_DECISION_PARTITIONS must be week or off, not "day"');
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

describe("citusNodeOf (the spends' group commit groups a batch by worker)", () => {
  it("answers an unknown agent as its own group, asks for the agents waiting in one statement, then answers their node", async () => {
    const asked: string[][] = [];
    let answer: (rows: { a: string; g: string }[]) => void = () => {};
    const pool = {
      query: (_sql: string, values: unknown[]) => {
        asked.push(values[0] as string[]);
        return new Promise<{ rows: { a: string; g: string }[] }>((resolve) => {
          answer = (rows) => resolve({ rows });
        });
      },
    };
    const nodeOf = citusNodeOf(pool);
    expect(nodeOf("ag-1")).toBe("agent:ag-1");
    expect(nodeOf("ag-2")).toBe("agent:ag-2"); // asked once ag-1's answer is in
    expect(asked).toEqual([["ag-1"]]);
    answer([{ a: "ag-1", g: "3" }]);
    await vi.waitFor(() => expect(asked).toEqual([["ag-1"], ["ag-2"]]));
    answer([{ a: "ag-2", g: "3" }]);
    await vi.waitFor(() => expect(nodeOf("ag-2")).toBe("node:3"));
    expect(nodeOf("ag-1")).toBe("node:3");
    expect(asked).toHaveLength(2);
  });

  it("after its reading expires, answers each agent's node as read before until the agent's new reading is in (never every agent its own group at once)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const asked: string[][] = [];
      const answers: ((rows: { a: string; g: string }[]) => void)[] = [];
      const pool = {
        query: (_sql: string, values: unknown[]) => {
          asked.push(values[0] as string[]);
          return new Promise<{ rows: { a: string; g: string }[] }>((resolve) => answers.push((rows) => resolve({ rows })));
        },
      };
      const nodeOf = citusNodeOf(pool);
      expect(nodeOf("ag-1")).toBe("agent:ag-1");
      answers.shift()?.([{ a: "ag-1", g: "3" }]);
      await vi.waitFor(() => expect(nodeOf("ag-1")).toBe("node:3"));
      expect(asked).toEqual([["ag-1"]]);

      vi.setSystemTime(Date.now() + CITUS_NODE_OF_TTL_MS);
      // Expired: asked again, and answered as read before meanwhile.
      expect(nodeOf("ag-1")).toBe("node:3");
      expect(nodeOf("ag-1")).toBe("node:3");
      expect(asked).toEqual([["ag-1"], ["ag-1"]]);
      // An agent never read is still its own group.
      expect(nodeOf("ag-2")).toBe("agent:ag-2");
      // The new reading (its shard moved to group 4) replaces the one before.
      answers.shift()?.([{ a: "ag-1", g: "4" }]);
      await vi.waitFor(() => expect(nodeOf("ag-1")).toBe("node:4"));

      // A second expiry forgets what only the first reading held: ag-1 is answered from the
      // second one while asked again.
      vi.setSystemTime(Date.now() + CITUS_NODE_OF_TTL_MS);
      expect(nodeOf("ag-1")).toBe("node:4");
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps answering an agent as its own group while the look-up fails, and asks again when it is wanted again", async () => {
    let calls = 0;
    const pool = {
      query: async () => {
        calls++;
        throw new Error("connection refused");
      },
    };
    const nodeOf = citusNodeOf(pool);
    expect(nodeOf("ag-1")).toBe("agent:ag-1");
    await vi.waitFor(() => expect(calls).toBe(1));
    // Asked again when the agent is wanted again.
    await vi.waitFor(() => {
      expect(nodeOf("ag-1")).toBe("agent:ag-1");
      expect(calls).toBe(2);
    });
  });
});
