import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runner } from "node-pg-migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE } from "../../src/store/locks.js";
import { FUNCTIONS_DIR, migrate, MIGRATIONS_DIR, MIGRATIONS_TABLE } from "../../src/store/migrate.js";
import { AGENT_SNAPSHOT_SQL, BURST_EXEMPT } from "../../src/store/verify-reads.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await db?.drop();
});

/** Applies `count` migrations to `url` in `direction` (the runner alone: no SQL function files). */
const steps = (url: string, direction: "up" | "down", count: number) =>
  runner({
    databaseUrl: url,
    dir: MIGRATIONS_DIR,
    ignorePattern: "(?!.*\\.sql$).*",
    migrationsTable: MIGRATIONS_TABLE,
    direction,
    count,
    checkOrder: true,
    logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });

/** A new database migrated up to, not including, the migration `file`. */
async function migratedUpTo(file: string): Promise<TestDatabase> {
  const old = await createTestDatabase({ migrate: false });
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const before = files.indexOf(file);
  expect(before).toBeGreaterThan(0);
  await steps(old.url, "up", before);
  return old;
}

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

  it("a connection lost mid-migration (Postgres stopping: Ctrl-C during writ dev's start) rejects, never crashes the process", async () => {
    const other = await createTestDatabase({ migrate: false });
    const holder = await other.pool.connect();
    try {
      // Held elsewhere, the migrations lock keeps migrate() waiting in a query: its connection is then cut.
      await holder.query("SELECT pg_advisory_lock($1::int, $2::int)", [WRIT_LOCK_NAMESPACE, LOCK_IDS.migrations]);
      const running = migrate(other.url).then(
        () => "resolved",
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      const waiting = () =>
        holder
          .query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'writ-migrate' AND wait_event_type = 'Lock'", [
            other.name,
          ])
          .then((r) => r.rows[0]?.pid ?? null);
      await expect.poll(waiting, { timeout: 20_000, interval: 50 }).not.toBeNull();
      await holder.query("SELECT pg_terminate_backend($1)", [await waiting()]);
      // Rejected with the connection's error; without an `error` listener the client's event would have thrown out of the process.
      expect(await running).toMatch(/terminat/i);
    } finally {
      holder.release();
      await other.drop();
    }
  });

  it("creates the revocations table", async () => {
    const { rows } = await db.pool.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'revocations'");
    expect(rows.map((r) => r.column_name)).toEqual(
      expect.arrayContaining(["sequence", "revocation_id", "agreement_id", "mandate_hash", "revocation", "received_at"]),
    );
  });
});

describe("0180_ledger_heads", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });

  it("moves the heads of a database migrated before it into agreement_ledger_heads, and back on the way down", async () => {
    old = await migratedUpTo("0180_ledger_heads.sql");
    const head = `sha256:${"a".repeat(64)}`;
    await old.pool.query(
      `INSERT INTO agreements (agreement_id, agent_id, status, record, ledger_sequence, ledger_head) VALUES ('a-spent', 'ag-1', 'active', '{}', 7, $1), ('a-empty', 'ag-1', 'active', '{}', 0, NULL)`,
      [head],
    );
    await steps(old.url, "up", 1);
    const heads = await old.pool.query("SELECT agreement_id, ledger_sequence, ledger_head FROM agreement_ledger_heads ORDER BY agreement_id");
    expect(heads.rows).toEqual([{ agreement_id: "a-spent", ledger_sequence: 7, ledger_head: head }]);
    const columns = await old.pool.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'agreements' AND column_name LIKE 'ledger%'");
    expect(columns.rows).toEqual([]);
    await steps(old.url, "down", 1);
    const back = await old.pool.query("SELECT agreement_id, ledger_sequence, ledger_head FROM agreements ORDER BY agreement_id");
    expect(back.rows).toEqual([
      { agreement_id: "a-empty", ledger_sequence: 0, ledger_head: null },
      { agreement_id: "a-spent", ledger_sequence: 7, ledger_head: head },
    ]);
    // The spend functions of 0160 are back: they read the columns again.
    const fn = await old.pool.query<{ d: string }>("SELECT pg_get_functiondef('writ_spend_write'::regproc) AS d");
    expect(fn.rows[0]?.d).toContain("UPDATE agreements x SET ledger_sequence");
    await steps(old.url, "up", 1);
    const again = await old.pool.query("SELECT agreement_id, ledger_sequence FROM agreement_ledger_heads ORDER BY agreement_id");
    expect(again.rows).toEqual([{ agreement_id: "a-spent", ledger_sequence: 7 }]);
  });
});

describe("0210_ledger_request_hash", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });

  it("keeps the request hash of each allowed entry whose ALLOW is still stored, marks nothing imported, and goes back down", async () => {
    old = await migratedUpTo("0210_ledger_request_hash.sql");
    const h = (c: string) => `sha256:${c.repeat(64)}`;
    await old.pool.query("INSERT INTO agreements (agreement_id, agent_id, status, record) VALUES ('a-1', 'ag-1', 'active', '{}')");
    await old.pool.query(
      `INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
       VALUES ('a-1', 1, '{}', 'kept', 'allowed', 'i1', 'USD', 100, $1, NULL), ('a-1', 2, '{}', 'pruned', 'allowed', 'i1', 'USD', 100, $2, $1)`,
      [h("1"), h("2")],
    );
    await old.pool.query(
      "INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision) VALUES ('ag-1', 'kept', 'a-1', $1, '{\"verdict\":\"ALLOW\"}')",
      [h("9")],
    );
    await steps(old.url, "up", 1);
    const { rows } = await old.pool.query("SELECT action_id, request_hash, imported FROM ledger_entries ORDER BY sequence");
    expect(rows).toEqual([
      { action_id: "kept", request_hash: h("9"), imported: false },
      { action_id: "pruned", request_hash: null, imported: false },
    ]);
    await steps(old.url, "down", 1);
    const columns = await old.pool.query(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'ledger_entries' AND column_name IN ('request_hash', 'imported')",
    );
    expect(columns.rows).toEqual([]);
    const fn = await old.pool.query<{ d: string }>("SELECT pg_get_functiondef('writ_spend_read'::regproc) AS d");
    expect(fn.rows[0]?.d).not.toContain("existing_request_hash");
    await steps(old.url, "up", 1);
  });
});

describe("0170_hash_checks", () => {
  it("checks every sha256 column with the test of writ_is_sha256 written out (0601), which accepts exactly what the regex it replaced accepted", async () => {
    const { rows: checks } = await db.pool.query<{ conname: string; def: string }>(
      "SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE contype = 'c' AND pg_get_constraintdef(oid) LIKE '%sha256%'",
    );
    expect(checks.map((c) => c.conname).sort()).toEqual([
      "ack_keys_thumbprint_check",
      "agents_fingerprint_check",
      "agreement_ledger_heads_ledger_head_check",
      "approvals_request_hash_check",
      "issuer_keys_thumbprint_check",
      "ledger_entries_entry_hash_check",
      "ledger_entries_prev_entry_hash_check",
      "ledger_entries_request_hash_check",
      "mandate_hashes_hash_check",
      "mandates_issuer_jwt_hash_check",
      "mandates_mandate_hash_check",
      "reports_evidence_hash_check",
      "revocations_revocation_id_check",
    ]);
    // 0601_inline_hash_checks: the test written out, no function call a write would inline
    for (const c of checks) expect(c.def, c.conname).toMatch(/^CHECK \(\(\(length\((\w+)\) = 71\) AND \(\1 ~ '\^sha256:\[0-9a-f\]\+\$'::text\)\)\)$/);
    const hex = "0123456789abcdef".repeat(4);
    const values = [
      `sha256:${hex}`,
      `sha256:${hex.slice(1)}`,
      `sha256:${hex}0`,
      `sha256:${hex.toUpperCase()}`,
      `sha256:${hex.slice(1)}g`,
      `SHA256:${hex}`,
      `sha256:${hex.slice(1)}\n`,
      `sha256:${hex}\n`,
      `sha256-${hex}`,
      ` sha256:${hex.slice(1)}`,
      `sha256:${hex.slice(1)}\u0661`,
      `sha256:${hex.slice(2)}é`,
      "",
      "sha256:",
    ];
    const { rows } = await db.pool.query<{ v: string; new: boolean; old: boolean }>(
      "SELECT v, writ_is_sha256(v) AS new, v ~ '^sha256:[0-9a-f]{64}$' AS old FROM unnest($1::text[]) AS v",
      [values],
    );
    expect(rows.filter((r) => r.new).map((r) => r.v)).toEqual([`sha256:${hex}`]);
    for (const r of rows) expect(r.new, JSON.stringify(r.v)).toBe(r.old);
    const { rows: nulls } = await db.pool.query("SELECT writ_is_sha256(NULL) AS n");
    expect(nulls[0]).toEqual({ n: null });
  });
});

describe("0220_mandate_hash", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });

  it("gives mandates recorded before it the hash of what the issuer signed; a mandate recorded twice under the old identity keeps it on its first row only", async () => {
    old = await migratedUpTo("0220_mandate_hash.sql");
    const input = "eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ";
    const other = "eyJhbGciOiJFUzI1NiJ9.eyJhIjoyfQ";
    const c = await old.pool.connect();
    try {
      await c.query("SET session_replication_role = replica"); // rows alone, without their delegations
      const rows: [string, string, string][] = [
        ["ap2-first", `${input}.c2lnLTE~WyJkIl0~kb`, "2026-01-01T00:00:00Z"],
        ["ap2-again", `${input}.c2lnLTI~WyJkIl0~kb2`, "2026-01-02T00:00:00Z"],
        ["ap2-other", `${other}.c2lnLTM~`, "2026-01-03T00:00:00Z"],
      ];
      for (const [id, sdJwt, at] of rows) {
        await c.query(
          `INSERT INTO mandates (delegation_id, agreement_id, agent_id, org_id, issuer_kid, issuer_org_id, issuer_jwt_hash, sd_jwt, claims, recorded_at)
           VALUES ($1, $1, 'ag-1', 'org-1', 'kid-1', 'org-w', 'sha256:' || encode(sha256(convert_to(split_part($2, '~', 1), 'UTF8')), 'hex'), $2, '{}', $3)`,
          [id, sdJwt, at],
        );
      }
    } finally {
      c.release();
    }
    await steps(old.url, "up", 1);
    const hash = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;
    const after = await old.pool.query("SELECT delegation_id, mandate_hash FROM mandates ORDER BY recorded_at");
    expect(after.rows).toEqual([
      { delegation_id: "ap2-first", mandate_hash: hash(input) },
      { delegation_id: "ap2-again", mandate_hash: null },
      { delegation_id: "ap2-other", mandate_hash: hash(other) },
    ]);
    await steps(old.url, "down", 1);
    const columns = await old.pool.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'mandates' AND column_name = 'mandate_hash'");
    expect(columns.rows).toEqual([]);
  });
});

describe("0190_denial_index and 0280_rules_in_one_place", () => {
  it("the burst rule's count of an agent's DENYs reads the partial index, which holds only the DENYs that count", async () => {
    const client = await db.pool.connect();
    try {
      await client.query("BEGIN");
      // Whatever the statistics: the plan must be able to use the index (the pkey also starts with agent_id).
      await client.query("SET LOCAL enable_seqscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${AGENT_SNAPSHOT_SQL}`, ["ag-1", 60, 5]);
      expect(rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("verify_decisions_agent_recent");
      const { rows: def } = await client.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE indexname = 'verify_decisions_agent_recent'");
      expect(def[0]?.indexdef).toMatch(
        new RegExp(`\\(agent_id, created_at\\) WHERE \\(\\(\\(decision ->> 'verdict'::text\\) = 'DENY'::text\\) AND \\(NOT ${BURST_EXEMPT}\\)\\)$`),
      );
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});

describe("0280_rules_in_one_place", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });

  it("moves the burst flag out of the stored answers into the column burst_exempt, and back on the way down", async () => {
    old = await migratedUpTo("0280_rules_in_one_place.sql");
    const h = `sha256:${"9".repeat(64)}`;
    await old.pool.query(
      `INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision)
       VALUES ('ag-1', 'exempt', NULL, $1, '{"verdict":"DENY","burst_exempt":true}'), ('ag-1', 'counted', NULL, $1, '{"verdict":"DENY"}')`,
      [h],
    );
    await steps(old.url, "up", 1);
    const { rows } = await old.pool.query("SELECT action_id, decision, burst_exempt FROM verify_decisions ORDER BY action_id");
    expect(rows).toEqual([
      { action_id: "counted", decision: { verdict: "DENY" }, burst_exempt: false },
      { action_id: "exempt", decision: { verdict: "DENY" }, burst_exempt: true },
    ]);
    await steps(old.url, "down", 1);
    const back = await old.pool.query("SELECT action_id, decision FROM verify_decisions ORDER BY action_id");
    expect(back.rows).toEqual([
      { action_id: "counted", decision: { verdict: "DENY" } },
      { action_id: "exempt", decision: { verdict: "DENY", burst_exempt: true } },
    ]);
    const fn = await old.pool.query<{ d: string }>("SELECT pg_get_functiondef('writ_spend_read'::regproc) AS d");
    expect(fn.rows[0]?.d).toContain("delegation_mixed");
  });
});

describe("0320_agent_keys and 0321_chain_agents", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });

  it("gives the ledger rows of a database migrated before them their agreement's agent, keys every per-agent table by agent_id first, and goes back down", async () => {
    old = await migratedUpTo("0320_agent_keys.sql");
    const h = (c: string) => `sha256:${c.repeat(64)}`;
    await old.pool.query(
      `INSERT INTO delegations (delegation_id, agent_id, principal, status, record) VALUES ('d-root', 'ag-root', '{}', 'active', '{}');
       INSERT INTO delegations (delegation_id, agent_id, principal, status, record, parent_delegation_id, chain_ids)
         VALUES ('d-child', 'ag-sub', '{}', 'active', '{}', 'd-root', '{d-root,d-gone}');
       INSERT INTO agreements (agreement_id, delegation_id, agent_id, status, record) VALUES ('a-1', 'd-child', 'ag-sub', 'active', '{}');`,
    );
    await old.pool.query(
      `INSERT INTO ledger_entries (agreement_id, sequence, entry, action_id, outcome, intent_id, currency, amount_minor, entry_hash, prev_entry_hash)
         VALUES ('a-1', 1, '{}', 'x1', 'allowed', 'i1', 'USD', 100, $1, NULL);
       INSERT INTO agreement_ledger_heads (agreement_id, ledger_sequence, ledger_head) VALUES ('a-1', 1, $1);
       INSERT INTO agreement_spend (agreement_id, intent_id, currency, spent_minor) VALUES ('a-1', 'i1', 'USD', 100);`.replace(/\$1/g, `'${h("b")}'`),
    );
    await steps(old.url, "up", 2);
    for (const table of ["ledger_entries", "agreement_ledger_heads", "agreement_spend"]) {
      const { rows } = await old.pool.query(`SELECT agent_id, agreement_id FROM ${table}`);
      expect(rows, table).toEqual([{ agent_id: "ag-sub", agreement_id: "a-1" }]);
    }
    const keys = await old.pool.query<{ t: string; def: string }>(
      `SELECT conrelid::regclass::text AS t, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE contype IN ('p', 'u') AND conrelid::regclass::text IN ('delegations', 'agreements', 'agreement_ledger_heads', 'ledger_entries', 'agreement_spend', 'mandates')
       ORDER BY 1, 2`,
    );
    // Every key but the mandate's issuer JWT hash (one mandate is one grant, whichever agent presents it).
    const perAgent = keys.rows.filter((k) => k.def !== "UNIQUE (issuer_jwt_hash)");
    expect(perAgent.length).toBe(8);
    for (const k of perAgent) expect(k.def, k.t).toMatch(/^(PRIMARY KEY|UNIQUE) \(agent_id, /);
    const chains = await old.pool.query("SELECT delegation_id, chain_agents FROM delegations ORDER BY delegation_id");
    expect(chains.rows).toEqual([
      { delegation_id: "d-child", chain_agents: ["ag-root", null] },
      { delegation_id: "d-root", chain_agents: [] },
    ]);
    await steps(old.url, "down", 2);
    const cols = await old.pool.query(
      "SELECT table_name FROM information_schema.columns WHERE column_name = 'agent_id' AND table_name IN ('ledger_entries', 'agreement_ledger_heads', 'agreement_spend')",
    );
    expect(cols.rows).toEqual([]);
    const back = await old.pool.query<{ def: string }>("SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'agreements_pkey'");
    expect(back.rows[0]?.def).toBe("PRIMARY KEY (agreement_id)");
  });
});

describe("SQL functions (src/store/sql/functions)", () => {
  it("has one file per function, named after it, and every migrate puts back the file's body", async () => {
    const files = readdirSync(FUNCTIONS_DIR)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const text = readFileSync(join(FUNCTIONS_DIR, f), "utf8");
      expect(text.match(/CREATE OR REPLACE FUNCTION (\w+)\(/g), f).toEqual([`CREATE OR REPLACE FUNCTION ${f.replace(/\.sql$/, "")}(`]);
    }
    // Another body, as an old migration would leave it; migrate (nothing left to migrate) restores the file's.
    await db.pool.query("CREATE OR REPLACE FUNCTION writ_is_sha256(v text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT true $$");
    expect(await migrate(db.url)).toEqual([]);
    const { rows } = await db.pool.query<{ ok: boolean; bad: boolean }>("SELECT writ_is_sha256($1) AS ok, writ_is_sha256('sha256:xyz') AS bad", [
      `sha256:${"a".repeat(64)}`,
    ]);
    expect(rows[0]).toEqual({ ok: true, bad: false });
    const spend = await db.pool.query<{ d: string }>("SELECT pg_get_functiondef('writ_spend_read'::regproc) AS d");
    expect(spend.rows[0]?.d).toContain("delegation_spend jsonb");
  });
});
