/**
 * Writ on a real Citus cluster (hack/citus/cluster.ts): a coordinator and two workers of
 * Debian's PostgreSQL 15 with Citus 13.2, built from ../shared/engines/citus by
 * hack/citus/provision.sh when missing (.ci/run runs it first). Two `writ serve` processes are
 * pointed at the coordinator (DATABASE_URL) and migrate it; the Citus layout distributes the
 * per-agent tables by agent_id and makes the shared ones reference tables (src/store/citus.ts);
 * a verify of a sample agent then round-trips through both processes, every ALLOW is shown to
 * be a transaction on one worker, a key revoked or an agent suspended through one process is
 * refused by the other at once (the change notices), a change notice sent on a worker reaches
 * the processes (they LISTEN on every worker), a stopped worker makes the caches read through
 * (fail closed) instead of serving what a lost notice changed, and a worker stopped under load
 * stops only its own agents' ALLOWs. Plain Postgres is left alone (the rest of the suite runs
 * on it).
 */
import { randomBytes } from "node:crypto";
import pg, { type Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionCitus, startCitusCluster, type CitusCluster, type CitusNode } from "../../hack/citus/cluster.js";
import { CITUS_DISTRIBUTED_TABLES, CITUS_REFERENCE_TABLES } from "../../src/store/citus.js";
import { isDbUnavailable } from "../../src/store/db-errors.js";
import { AGENT_SNAPSHOT_SQL } from "../../src/store/verify-reads.js";
import { migrate } from "../../src/store/migrate.js";
import { createPool } from "../../src/store/pool.js";
import { pruneOnce } from "../../src/store/retention.js";
import { recordAllowedSpend, recordAllowedSpends } from "../../src/store/ledger/index.js";
import { recordSpend, spendQueue } from "../../src/verify/commit/queues.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { freshPublicKey, type Answer, type RegistryWorld } from "../helpers/registry-client.js";
import { PRINCIPAL } from "../fixtures/records.js";
import { action, HOUR, iso, mandate, paymentParty, storeAgreement, untilAllowing, type VerifyWorld } from "../helpers/verify-world.js";

// Skipped only when Citus is neither installed nor buildable here (its source folder is not
// beside the repository, WRIT_CITUS_SOURCE): .ci/run builds it, so in CI these tests run.
const tools = provisionCitus();

describe.skipIf(tools === null)("Writ on a Citus cluster (coordinator + 2 workers)", () => {
  let cluster: CitusCluster;
  let pool: Pool;
  const serves: ServeProcess[] = [];
  const admin = `admin-${randomBytes(16).toString("hex")}`;
  let world: VerifyWorld;
  let serveEnv: Record<string, string> = {};

  async function call(url: string, method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await r.text();
    return { status: r.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>), headers: r.headers };
  }

  /**
   * `call` for the set-up writes (organizations, keys, agents: reference tables, written on every
   * node): after a worker's restart, a pooled coordinator session's first write that reaches it
   * fails once on the connection Citus had cached to it (Writ answers 503; docs/scale.md), so a
   * 503 is retried (bounded).
   */
  async function setupCall(url: string, method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const r = await call(url, method, path, token, body);
      if (r.status !== 503 || attempt >= 20) return r;
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** A new agent with an agreement of ample budget (intent i1), and the id of its shard of `delegations`. */
  async function agentWithAgreement(): Promise<{ agent: string; agreementId: string; shard: string }> {
    const { agent_id } = await world.registerAgent(world.operatorKey);
    const { agreementId } = await storeAgreement(
      { ...world, agentId: agent_id },
      { mandates: [mandate(agent_id, "i1", { maximum_amount: 10, cumulative_maximum: 100_000 })] },
    );
    const { rows } = await pool.query<{ s: string }>("SELECT get_shard_id_for_distribution_column('delegations', $1::text)::text AS s", [agent_id]);
    return { agent: agent_id, agreementId, shard: rows[0]?.s as string };
  }

  /** Two spends of 1 USD of each agent of `pair` (two or more) in one batch through `through`: each agent's intent spend is then 1, then 2 USD. */
  async function spendTwiceEach(through: Pool, pair: readonly { agent: string; agreementId: string }[], prefix: string): Promise<void> {
    const spends = pair.flatMap((p, k) =>
      [0, 1].map((i) => ({
        agreementId: p.agreementId,
        agentId: p.agent,
        intentId: "i1",
        actionId: `${prefix}-${k}-${i}`,
        amountMinor: 100n,
        currency: "USD",
        at: new Date().toISOString(),
      })),
    );
    const results = await recordAllowedSpends(through, spends);
    expect(results.map((r) => ("recorded" in r && r.recorded ? r.intentSpentMinor : r))).toEqual(pair.flatMap(() => [100n, 200n]));
  }

  beforeAll(async () => {
    cluster = await startCitusCluster({
      tools: tools ?? undefined,
      // 2PC recovery off: pg_dist_transaction keeps every two-phase commit, which the router test counts.
      // pg_stat_statements: where the spend transactions ran (the direct path's test).
      parameters: {
        "citus.shard_count": 4,
        fsync: "off",
        "citus.recover_2pc_interval": -1,
        shared_preload_libraries: "citus,pg_stat_statements",
        "pg_stat_statements.track": "all",
        // A shard move's connections from a node to itself: the address the .pgpass names (not localhost).
        "citus.local_hostname": "127.0.0.1",
      },
    });
    const env = {
      DATABASE_URL: cluster.url(),
      BUR_ADMIN_TOKEN: admin,
      SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
      BUR_WEBHOOK_WORKER: "0",
      LOG_LEVEL: "warn",
    };
    serveEnv = env;
    serves.push(...(await Promise.all([startServeProcess({ env }), startServeProcess({ env })])));
    pool = createPool(cluster.url(), { max: 3 });
    const a = serves[0] as ServeProcess;
    // A registry world over the first process, shaped as the verify helpers want it.
    const registry = {
      admin,
      db: { pool, url: cluster.url(), name: cluster.database, drop: async () => {} },
      call: (method: string, path: string, token?: string | null, body?: unknown) => setupCall(a.url, method, path, token ?? null, body),
      async createOrg(orgType: string) {
        const r = await setupCall(a.url, "POST", "/v1/orgs", admin, { name: `org ${orgType}`, org_type: orgType });
        if (r.status !== 201) throw new Error(`createOrg: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.org_id as string;
      },
      async issueKey(orgId: string) {
        const r = await setupCall(a.url, "POST", `/v1/orgs/${orgId}/keys`, admin, { name: "test key" });
        if (r.status !== 201) throw new Error(`issueKey: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body as { key_id: string; token: string };
      },
      async registerAgent(token: string) {
        const agent_id = `agent-${randomBytes(5).toString("hex")}`;
        const r = await setupCall(a.url, "POST", "/v1/agents", token, {
          agent_id,
          principal_id: `prn_${randomBytes(6).toString("hex")}`,
          verification_level: "operator_verified",
          public_key: freshPublicKey(),
        });
        if (r.status !== 201) throw new Error(`registerAgent: ${r.status} ${JSON.stringify(r.body)}`);
        return { agent_id, fingerprint: r.body.fingerprint as string, answer: r };
      },
    } as unknown as RegistryWorld;
    // The first org creation waits for the migrations (the API answers 503 before them).
    const deadline = Date.now() + 60_000;
    let operatorOrg: string | null = null;
    while (operatorOrg === null) {
      try {
        operatorOrg = await registry.createOrg("agent_operator");
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const { token } = await registry.issueKey(operatorOrg);
    const { agent_id } = await registry.registerAgent(token);
    const psp = await paymentParty(registry, "processor_psp", "psp");
    world = { ...registry, operatorOrg, operatorKey: token, agentId: agent_id, psp } as unknown as VerifyWorld;
  }, 240_000);

  afterAll(async () => {
    for (const s of serves) await s.stop("SIGTERM", 10_000).catch(() => {});
    await pool?.end().catch(() => {});
    await cluster?.stop();
  }, 60_000);

  const referenceTables = [...CITUS_REFERENCE_TABLES].sort();

  /**
   * Changes rows with no trigger firing (no change notice anywhere): what a lost notice looks like.
   * After a worker's restart, a pooled session's first write reaching it fails once on the
   * connection Citus had cached (isDbUnavailable): retried (bounded).
   */
  async function silently(sql: string, params: unknown[]): Promise<void> {
    await retrying(() => silentlyOnce(sql, params));
  }

  /** `f`, again (at most 5 more times) while it fails as isDbUnavailable (see `silently`). */
  async function retrying<T>(f: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await f();
      } catch (e) {
        if (!isDbUnavailable(e) || attempt >= 5) throw e;
      }
    }
  }

  async function silentlyOnce(sql: string, params: unknown[]): Promise<void> {
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      await c.query("SET LOCAL session_replication_role = replica");
      const r = await c.query(sql, params);
      expect(r.rowCount).toBe(1);
      await c.query("COMMIT");
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      c.release();
    }
  }

  /** The status of `path` through `url` with `token`, polled (bounded) until it is `want`. */
  async function untilStatus(url: string, path: string, token: string, want: number, boundMs = 10_000): Promise<number> {
    const deadline = Date.now() + boundMs;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call(url, "GET", path, token)).status;
      if (status === want) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return status;
  }

  it("migrates the coordinator, makes the shared tables reference tables with a copy on every worker and distributes the per-agent tables by agent_id, co-located", async () => {
    const { rows } = await pool.query<{ t: string; kind: string }>(
      "SELECT table_name::text AS t, citus_table_type AS kind FROM citus_tables WHERE table_name::text = ANY($1::text[]) ORDER BY 1",
      [referenceTables],
    );
    expect(rows).toEqual(referenceTables.map((t) => ({ t, kind: "reference" })));
    // Every worker holds a placement of each reference table's shard.
    const placed = await pool.query<{ t: string; nodes: number }>(
      `SELECT s.logicalrelid::text AS t, count(DISTINCT p.groupid)::int AS nodes
         FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n ON n.groupid = p.groupid
        WHERE s.logicalrelid::text = ANY($1::text[]) AND n.noderole = 'primary' AND n.groupid <> 0 GROUP BY 1 ORDER BY 1`,
      [referenceTables],
    );
    expect(placed.rows).toEqual(referenceTables.map((t) => ({ t, nodes: cluster.workers.length })));
    // A revocation marker written on the coordinator is on every worker's copy.
    await pool.query(
      "INSERT INTO delegation_revocations (delegation_id, revoked_at, reason, revoked_by, root_id) VALUES ('del-citus-probe', now(), 'test', 'test', 'del-citus-probe')",
    );
    for (const w of cluster.workers) {
      const n = await cluster.withClient(
        (c) => c.query<{ n: number }>("SELECT count(*)::int AS n FROM delegation_revocations WHERE delegation_id = 'del-citus-probe'"),
        w,
      );
      expect(n.rows[0]?.n, w.name).toBe(1);
    }
    // Every per-agent table is distributed by agent_id, all in one co-location group.
    const dist = await pool.query<{ t: string; col: string; g: number }>(
      "SELECT table_name::text AS t, distribution_column AS col, colocation_id AS g FROM citus_tables WHERE citus_table_type = 'distributed' ORDER BY 1",
    );
    expect(dist.rows.map((r) => r.t)).toEqual([...CITUS_DISTRIBUTED_TABLES].sort());
    expect(new Set(dist.rows.map((r) => `${r.col} ${r.g}`)).size).toBe(1);
    expect(dist.rows[0]?.col).toBe("agent_id");
    // The layout is idempotent: migrating again changes nothing.
    expect(await migrate(cluster.url())).toEqual([]);
  }, 60_000);

  it("answers a verify of a sample agent through both processes: ALLOW within the budget, then DENY", async () => {
    await storeAgreement(world, { mandates: [mandate(world.agentId, "i1", { maximum_amount: 10, cumulative_maximum: 20 })] });
    const [a, b] = serves as [ServeProcess, ServeProcess];
    await untilAllowing(a.url, world.agentId, world.operatorKey); // spends 1 of 20
    const first = await call(b.url, "POST", "/v1/verify", world.operatorKey, { agent_id: world.agentId, action: action({ amount: 10 }) });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ verdict: "ALLOW" });
    const over = await call(a.url, "POST", "/v1/verify", world.operatorKey, { agent_id: world.agentId, action: action({ amount: 10 }) });
    expect(over.status, JSON.stringify(over.body)).toBe(200);
    expect(over.body).toMatchObject({ verdict: "DENY", reasons: ["CUMULATIVE_BUDGET_EXCEEDED"] });
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries e WHERE e.agent_id = $1 AND e.outcome = 'allowed'", [
      world.agentId,
    ]);
    expect(rows[0]?.n).toBe(2);
  }, 60_000);

  it("refuses a key revoked through one process in the other at once (the change notice on a Citus coordinator)", async () => {
    const [a, b] = serves as [ServeProcess, ServeProcess];
    const { key_id, token } = await world.issueKey(world.operatorOrg);
    // Both processes have the key cached.
    for (const s of serves) expect((await call(s.url, "GET", `/v1/orgs/${world.operatorOrg}/keys`, token)).status).toBe(200);
    expect((await call(a.url, "DELETE", `/v1/orgs/${world.operatorOrg}/keys/${key_id}`, admin)).status).toBe(200);
    // The notice travels asynchronously: bounded polling, not a sleep.
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call(b.url, "GET", `/v1/orgs/${world.operatorOrg}/keys`, token)).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
  }, 60_000);

  it("refuses an agent suspended through one process in the other at once (the agents' change notice)", async () => {
    const [a, b] = serves as [ServeProcess, ServeProcess];
    const { agent_id } = await world.registerAgent(world.operatorKey);
    const w = { ...world, agentId: agent_id };
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 10, cumulative_maximum: 100 })] });
    await untilAllowing(b.url, agent_id, world.operatorKey); // b keeps the agent's snapshot
    const patched = await call(a.url, "PATCH", `/v1/agents/${agent_id}`, world.operatorKey, { status: "suspended" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const deadline = Date.now() + 10_000;
    let last: Answer | null = null;
    while (Date.now() < deadline) {
      last = await call(b.url, "POST", "/v1/verify", world.operatorKey, { agent_id, action: action({ amount: 1 }) });
      if (last.body.verdict !== "ALLOW") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(last?.body, JSON.stringify(last?.body)).toMatchObject({ verdict: "DENY", reasons: expect.arrayContaining(["AGENT_NOT_ACTIVE"]) as unknown });
  }, 60_000);

  it("sends a reference table's change notice from the coordinator's copy only, so its writes commit (writ_notify_here)", async () => {
    expect((await pool.query<{ here: boolean }>("SELECT writ_notify_here() AS here")).rows[0]?.here).toBe(true);
    for (const w of cluster.workers)
      expect((await cluster.withClient((c) => c.query<{ here: boolean }>("SELECT writ_notify_here() AS here"), w)).rows[0]?.here, w.name).toBe(false);
    // A reference table with the keys' trigger (as orgs and api_keys have): the trigger fires on
    // every node's copy, the workers' inside a two-phase commit, where a NOTIFY is refused.
    const table = `notice_probe_${randomBytes(4).toString("hex")}`;
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, v int NOT NULL)`);
    await pool.query(`CREATE TRIGGER ${table}_changed AFTER UPDATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION writ_keys_changed()`);
    const c = await pool.connect();
    try {
      await c.query("SET citus.enable_unsafe_triggers = on");
      await c.query("SELECT create_reference_table($1)", [table]);
      await c.query("RESET citus.enable_unsafe_triggers");
      await c.query(`INSERT INTO ${table} VALUES (1, 0)`);
      const heard: string[] = [];
      const listener = new pg.Client({ connectionString: cluster.url() });
      await listener.connect();
      try {
        listener.on("notification", (n) => heard.push(String(n.payload)));
        await listener.query("LISTEN writ_changes");
        await c.query(`UPDATE ${table} SET v = v + 1`);
        await listener.query("SELECT 1"); // the notice (sent at the UPDATE's commit) arrives before this answer
        const deadline = Date.now() + 5000;
        while (!heard.includes("keys") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(heard).toContain("keys");
      } finally {
        await listener.end();
      }
    } finally {
      c.release();
      await pool.query(`DROP TABLE ${table}`);
    }
  }, 60_000);

  it("hears a change notice sent on a worker (every process LISTENs on every worker)", async () => {
    const [, b] = serves as [ServeProcess, ServeProcess];
    const { key_id, token } = await world.issueKey(world.operatorOrg);
    const path = `/v1/orgs/${world.operatorOrg}/keys`;
    expect((await call(b.url, "GET", path, token)).status).toBe(200); // cached in b
    await silently("UPDATE api_keys SET revoked_at = now() WHERE key_id = $1", [key_id]);
    // No notice was sent: b still answers from its cache (WRIT_CACHE_TTL_MS is 60 s).
    expect((await call(b.url, "GET", path, token)).status).toBe(200);
    // The notice a shard's trigger sends from a worker.
    await cluster.withClient((c) => c.query("NOTIFY writ_changes, 'keys'"), cluster.workers[1]);
    expect(await untilStatus(b.url, path, token, 401)).toBe(401);
  }, 60_000);

  it("records every ALLOW in a transaction on one worker: no two-phase commit, one task per distributed statement, the agent's rows on one worker", async () => {
    const { agent_id } = await world.registerAgent(world.operatorKey);
    const w = { ...world, agentId: agent_id };
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 10, cumulative_maximum: 100_000 })] });
    const [a, b] = serves as [ServeProcess, ServeProcess];
    await untilAllowing(a.url, agent_id, world.operatorKey);
    const twoPhase = async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_dist_transaction")).rows[0]?.n;
    const prepared = await twoPhase();
    // A batch of ALLOWs through both processes, side by side (the group commit batches them).
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => call((i % 2 ? a : b).url, "POST", "/v1/verify", world.operatorKey, { agent_id, action: action({ amount: 1 }) })),
    );
    expect(answers.map((r) => `${r.status} ${String(r.body.verdict)}`)).toEqual(Array(24).fill("200 ALLOW"));
    // No transaction of theirs was committed in two phases (Citus records each in pg_dist_transaction;
    // the cluster's 2PC recovery is off: citus.recover_2pc_interval = -1).
    expect(await twoPhase()).toBe(prepared);

    // The spend transaction itself, through the store: every remote command Citus sends goes to
    // one worker (citus.log_remote_commands), none is a PREPARE TRANSACTION, and every statement
    // is sent whole to that worker, on its shards (a router plan).
    const one = createPool(cluster.url(), { max: 1 });
    try {
      const c = await one.connect();
      const notices: { message: string; detail: string }[] = [];
      c.on("notice", (n) => notices.push({ message: n.message ?? "", detail: n.detail ?? "" }));
      await c.query("SET citus.log_remote_commands = on");
      c.release();
      for (let i = 0; i < 3; i++) {
        const r = await recordAllowedSpend(one, {
          agreementId,
          agentId: agent_id,
          intentId: "i1",
          actionId: `act-citus-router-${i}`,
          amountMinor: 100n,
          currency: "USD",
          at: new Date().toISOString(),
        });
        expect(r).toMatchObject({ recorded: true });
      }
      const remote = notices.filter((n) => n.message.startsWith("issuing "));
      const servers = new Set(remote.map((n) => /on server \S+@([\d.]+:\d+)/.exec(n.detail)?.[1]));
      const { rows } = await pool.query<{ port: number }>(
        "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('ledger_entries', $1::text)",
        [agent_id],
      );
      expect([...servers]).toEqual([`127.0.0.1:${rows[0]?.port}`]);
      expect(remote.filter((n) => /PREPARE TRANSACTION|COMMIT PREPARED/.test(n.message))).toEqual([]);
      // The spend functions ran whole on that worker (src/store/citus.ts, CITUS_DELEGATED_FUNCTIONS):
      // per spend, the coordinator sent its read and its write as one call each, and nothing
      // statement by statement; anything else sent is a statement on the agent's shards.
      const statements = remote.filter((n) => /^issuing (SELECT|INSERT|UPDATE|DELETE)/.test(n.message));
      const calls = statements.filter((n) => /writ_spend_(read|write)_agent\(/.test(n.message));
      expect(calls.filter((n) => /writ_spend_read_agent\(/.test(n.message))).toHaveLength(3);
      expect(calls.filter((n) => /writ_spend_write_agent\(/.test(n.message))).toHaveLength(3);
      for (const n of statements.filter((x) => !calls.includes(x))) expect(n.message).toMatch(/public\.\w+_\d+/);
    } finally {
      await one.end();
    }

    // The verify read of the agent is a router plan: one task.
    const plan = await pool.query<{ "QUERY PLAN": string }>(
      `EXPLAIN ${AGENT_SNAPSHOT_SQL.replaceAll("$1", "$1::text").replaceAll("$2", "60").replaceAll("$3", "20")}`,
      [agent_id],
    );
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/Task Count: 1\n/);

    // The agent's rows are on exactly one worker: each per-agent table's shard of the agent
    // exists, with its rows, on that worker alone.
    const shards = await pool.query<{ t: string; shard: string; port: number }>(
      `SELECT s.table_name::text AS t, s.shard_name AS shard, s.nodeport AS port FROM citus_shards s
        WHERE s.citus_table_type = 'distributed' AND s.shardid = get_shard_id_for_distribution_column(s.table_name, $1::text)`,
      [agent_id],
    );
    expect(new Set(shards.rows.map((r) => r.port)).size).toBe(1);
    for (const worker of cluster.workers) {
      const here = worker.port === shards.rows[0]?.port;
      for (const r of shards.rows.filter((x) => ["ledger_entries", "agreements", "verify_decisions"].includes(x.t))) {
        const n = await cluster.withClient(async (c) => {
          const exists = (await c.query<{ e: boolean }>("SELECT to_regclass($1) IS NOT NULL AS e", [r.shard])).rows[0]?.e;
          if (!exists) return 0;
          return (
            (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${c.escapeIdentifier(r.shard)} WHERE agent_id = $1`, [agent_id])).rows[0]?.n ?? 0
          );
        }, worker);
        if (here) expect(n, `${r.t} on ${worker.name}`).toBeGreaterThan(0);
        else expect(n, `${r.t} on ${worker.name}`).toBe(0);
      }
    }
  }, 120_000);

  it("writes the spends of several agents on one worker in one transaction there, run whole by its spend functions", async () => {
    // Agents until two share a worker (with two workers, three always do).
    const byPort = new Map<number, { agent: string; agreementId: string }[]>();
    let pair: { agent: string; agreementId: string }[] | undefined;
    for (let n = 0; n < 3 && !pair; n++) {
      const { agent, agreementId } = await agentWithAgreement();
      const port = (await workerOf(agent)).node.port;
      const list = [...(byPort.get(port) ?? []), { agent, agreementId }];
      byPort.set(port, list);
      if (list.length === 2) pair = list;
    }
    if (!pair) throw new Error("three agents on two workers: two share one");
    const worker = cluster.workers.find((w) => byPort.get(w.port) === pair) as CitusCluster["workers"][number];
    const twoPhase = async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_dist_transaction")).rows[0]?.n;
    const prepared = await twoPhase();
    const one = createPool(cluster.url(), { max: 1 });
    try {
      const c = await one.connect();
      const notices: { message: string; detail: string }[] = [];
      c.on("notice", (n) => notices.push({ message: n.message ?? "", detail: n.detail ?? "" }));
      await c.query("SET citus.log_remote_commands = on");
      c.release();
      // Two spends of each agent, in one batch: one transaction.
      await spendTwiceEach(one, pair, "act-citus-pair");
      const remote = notices.filter((n) => n.message.startsWith("issuing "));
      // Everything went to the pair's worker, as one call of the read and one of the writes, with no
      // statement sent on its own and no two-phase commit.
      expect([...new Set(remote.map((n) => /on server \S+@([\d.]+:\d+)/.exec(n.detail)?.[1]))]).toEqual([`127.0.0.1:${worker.port}`]);
      const statements = remote.filter((n) => /^issuing (SELECT|INSERT|UPDATE|DELETE)/.test(n.message));
      expect(statements.map((n) => /writ_spend_(read|write)_agent/.exec(n.message)?.[0])).toEqual(["writ_spend_read_agent", "writ_spend_write_agent"]);
      expect(remote.filter((n) => /PREPARE TRANSACTION|COMMIT PREPARED/.test(n.message))).toEqual([]);
      expect(await twoPhase()).toBe(prepared);
    } finally {
      await one.end();
    }
    // The worker made its read and write functions, whose statements name the pair's shards.
    const made = await cluster.withClient(
      async (c) =>
        (
          await c.query<{ f: string; names: boolean }>(
            `SELECT regexp_replace(p.proname, '_[0-9a-f]{16}$', '') AS f,
                    bool_and(pg_get_functiondef(p.oid) LIKE '%' || shard_name('ledger_entries'::regclass, get_shard_id_for_distribution_column('ledger_entries', a)) || '%') AS names
               FROM pg_proc p, unnest($1::text[]) AS a WHERE p.proname LIKE 'writlocal\\_%' GROUP BY 1 ORDER BY 1`,
            [pair.map((p) => p.agent)],
          )
        ).rows,
      worker,
    );
    expect(made).toEqual([
      { f: "writlocal_read", names: true },
      { f: "writlocal_write", names: true },
    ]);
    // The ledgers read back through the coordinator: each agent's two entries.
    for (const p of pair) {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE agent_id = $1", [p.agent]);
      expect(rows[0]?.n).toBe(2);
    }
  }, 120_000);

  /** Top-level calls of `writ_spend_read(…)` (the spend transaction's first statement, as a data-plane session sends it) on `node`. */
  async function spendReadCalls(node: CitusNode): Promise<number> {
    return cluster.withClient(
      async (c) =>
        (
          await c.query<{ n: number }>(
            "SELECT coalesce(sum(calls), 0)::int AS n FROM pg_stat_statements WHERE query LIKE '%FROM writ_spend_read(%' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
          )
        ).rows[0]?.n ?? 0,
      node,
    );
  }

  /** Resets pg_stat_statements on every node (the extension made on the coordinator reaches the workers). */
  async function resetStatements(): Promise<void> {
    await cluster.withClient((c) => c.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"));
    for (const n of [cluster.coordinator, ...cluster.workers]) await cluster.withClient((c) => c.query("SELECT pg_stat_statements_reset()"), n);
  }

  /** The worker node holding `agent`'s shards, and its node group. */
  async function workerOf(agent: string): Promise<{ node: CitusNode; group: number; other: CitusNode }> {
    const { rows } = await pool.query<{ port: number; g: number }>(
      `SELECT n.nodeport AS port, p.groupid AS g FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid AND n.noderole = 'primary'
        WHERE p.shardid = get_shard_id_for_distribution_column('delegations', $1::text)`,
      [agent],
    );
    const node = cluster.workers.find((w) => w.port === rows[0]?.port) as CitusNode;
    return { node, group: Number(rows[0]?.g), other: cluster.workers.find((w) => w !== node) as CitusNode };
  }

  it("sends an ALLOW's spend transaction to the agent's worker itself, without the coordinator (WRIT_CITUS_DIRECT on, the default), and through the coordinator with it off", async () => {
    const { agent_id } = await world.registerAgent(world.operatorKey);
    const w = { ...world, agentId: agent_id };
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 10, cumulative_maximum: 100_000 })] });
    const { node, other } = await workerOf(agent_id);
    const off = await startServeProcess({ env: { ...serveEnv, WRIT_CITUS_DIRECT: "off" } });
    try {
      // Each process learns the agent's worker (and the workers' addresses) with its first spends,
      // which go through the coordinator: ALLOWs (bounded) until one of each process ran on the worker.
      for (const s of serves) {
        await untilAllowing(s.url, agent_id, world.operatorKey);
        for (let i = 0; ; i++) {
          await resetStatements();
          expect((await call(s.url, "POST", "/v1/verify", world.operatorKey, { agent_id, action: action({ amount: 1 }) })).body.verdict).toBe("ALLOW");
          if ((await spendReadCalls(node)) > 0) break;
          expect(i, `${s.url} sends the spends to the worker`).toBeLessThan(20);
        }
      }
      await untilAllowing(off.url, agent_id, world.operatorKey);
      const verify = async (s: ServeProcess) => {
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => call(s.url, "POST", "/v1/verify", world.operatorKey, { agent_id, action: action({ amount: 1 }) })),
        );
        expect(answers.map((r) => `${r.status} ${String(r.body.verdict)}`)).toEqual(Array(6).fill("200 ALLOW"));
      };
      // On: every spend transaction's statements ran on the agent's worker, none on the coordinator.
      await resetStatements();
      for (const s of serves) await verify(s);
      expect(await spendReadCalls(cluster.coordinator)).toBe(0);
      expect(await spendReadCalls(node)).toBeGreaterThan(0);
      expect(await spendReadCalls(other)).toBe(0);
      // Off: through the coordinator (which delegates the spend functions to the worker).
      await resetStatements();
      await verify(off);
      expect(await spendReadCalls(cluster.coordinator)).toBeGreaterThan(0);
      expect(await spendReadCalls(node)).toBe(0);
    } finally {
      await off.stop("SIGTERM", 10_000).catch(() => {});
    }
  }, 120_000);

  it("records a spend sent to a worker that no longer holds the agent's shards (moved since the process looked): through Citus from that worker, on the new one", async () => {
    const { agent: agent_id, agreementId } = await agentWithAgreement();
    const before = await workerOf(agent_id);
    // The group commit with the worker it read before the move (citusNodeOf keeps it a minute).
    const queue = spendQueue(pool, { direct: true, perAgent: () => true, nodeOf: () => `node:${before.group}` });
    const spend = (i: number) =>
      recordSpend(queue, {
        agreementId,
        agentId: agent_id,
        intentId: "i1",
        actionId: `act-moved-${i}`,
        amountMinor: 100n,
        currency: "USD",
        at: new Date().toISOString(),
      });
    const shard = (await pool.query<{ id: string }>("SELECT get_shard_id_for_distribution_column('delegations', $1::text)::text AS id", [agent_id])).rows[0]
      ?.id;
    const move = (from: CitusNode, to: CitusNode) =>
      pool.query("SELECT citus_move_shard_placement($1::bigint, '127.0.0.1', $2, '127.0.0.1', $3, shard_transfer_mode => 'block_writes')", [
        shard,
        from.port,
        to.port,
      ]);
    try {
      expect(await spend(0)).toMatchObject({ recorded: true });
      await move(before.node, before.other);
      expect((await workerOf(agent_id)).node).toBe(before.other);
      await resetStatements();
      for (let i = 1; i <= 3; i++) expect(await spend(i)).toMatchObject({ recorded: true, replayed: false });
      // Sent to the old worker, which ran it through Citus on the agent's new worker.
      expect(await spendReadCalls(before.node)).toBe(3);
      expect(await spendReadCalls(cluster.coordinator)).toBe(0);
      const entries = await cluster.withClient(
        async (c) =>
          (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE agent_id = $1 AND action_id LIKE 'act-moved-%'", [agent_id]))
            .rows[0]?.n,
      );
      expect(entries).toBe(4);
    } finally {
      if ((await workerOf(agent_id)).node !== before.node) await move(before.other, before.node);
      await queue.close();
    }
  }, 120_000);

  it("records a batch of two agents sent to their old worker after one's shard moved: no read or write of the moved shard's copy left there", async () => {
    // Agents until two share a worker on different shards (4 shards on 2 workers; bounded).
    const seen: { agent: string; agreementId: string; shard: string; port: number }[] = [];
    let pair: (typeof seen)[number][] | undefined;
    for (let n = 0; n < 12 && !pair; n++) {
      const a = await agentWithAgreement();
      const me = { ...a, port: (await workerOf(a.agent)).node.port };
      const mate = seen.find((s) => s.port === me.port && s.shard !== me.shard);
      if (mate) pair = [mate, me].sort((x, y) => (x.agent < y.agent ? -1 : 1));
      seen.push(me);
    }
    if (!pair) throw new Error("twelve agents on four shards: two share a worker on different shards");
    const stays = pair[0] as (typeof seen)[number];
    const moves = pair[1] as (typeof seen)[number];
    const { node, other } = await workerOf(moves.agent);
    const move = (from: CitusNode, to: CitusNode) =>
      pool.query("SELECT citus_move_shard_placement($1::bigint, '127.0.0.1', $2, '127.0.0.1', $3, shard_transfer_mode => 'block_writes')", [
        moves.shard,
        from.port,
        to.port,
      ]);
    // Each agent's shard-group functions made on the old worker before the move.
    const direct = new pg.Pool({ host: "127.0.0.1", port: node.port, user: "postgres", password: cluster.password, database: cluster.database, max: 1 });
    try {
      await spendTwiceEach(direct, pair, "act-pair-before");
      await move(node, other);
      expect((await workerOf(moves.agent)).node).toBe(other);
      // The old worker still has the moved agent's function and, until Citus cleans it up, its
      // shard's copy: a batch of both agents sent there (as the group commit does with the worker
      // it read before the move: citusNodeOf keeps it a minute) must read and write each agent
      // on its own worker. When Citus refuses the batch in the call it delegated for the first
      // agent (its statements for the other agent), the group commit writes it again in halves:
      // so does this test, agent by agent.
      const spendsOf = (p: { agent: string; agreementId: string }, k: number) =>
        [0, 1].map((i) => ({
          agreementId: p.agreementId,
          agentId: p.agent,
          intentId: "i1",
          actionId: `act-pair-after-${k}-${i}`,
          amountMinor: 100n,
          currency: "USD",
          at: new Date().toISOString(),
        }));
      const all = pair.flatMap((p, k) => spendsOf(p, k));
      const results = await recordAllowedSpends(direct, all).catch(async (e: unknown) => {
        expect(String(e)).toContain("forced function pushdown");
        return (await Promise.all(pair.map((p, k) => recordAllowedSpends(direct, spendsOf(p, k))))).flat();
      });
      // Each agent's intent counts the two spends before the move: 3, then 4 USD.
      expect(results.map((r) => ("recorded" in r && r.recorded ? r.intentSpentMinor : r))).toEqual([300n, 400n, 300n, 400n]);
    } finally {
      await direct.end();
      if ((await workerOf(moves.agent)).node !== node) await move(other, node);
    }
    for (const p of [stays, moves]) {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE agent_id = $1", [p.agent]);
      expect(rows[0]?.n).toBe(4);
    }
  }, 120_000);

  it("reads and writes the rows of several agents of a worker's shard groups with one call of each of its spend functions, on a session of the worker itself", async () => {
    // Agents until a worker holds two of one shard group and one of another (4 shards, 2 a worker: bounded).
    const seen: { agent: string; agreementId: string; shard: string; port: number }[] = [];
    let agents: { agent: string; agreementId: string }[] | undefined;
    for (let n = 0; n < 24 && !agents; n++) {
      const w = await agentWithAgreement();
      seen.push({ ...w, port: (await workerOf(w.agent)).node.port });
      for (const x of seen) {
        const same = seen.filter((o) => o.shard === x.shard);
        const other = seen.find((o) => o.port === x.port && o.shard !== x.shard);
        if (same.length >= 2 && other) agents = [...same.slice(0, 2), other];
      }
    }
    if (!agents) throw new Error("no worker with two agents of one shard group and one of another in 24");
    const { node } = await workerOf(agents[0]?.agent as string);
    const direct = new pg.Pool({ host: "127.0.0.1", port: node.port, user: "postgres", password: cluster.password, database: cluster.database, max: 1 });
    try {
      await resetStatements();
      await spendTwiceEach(direct, agents, "act-shard-groups");
      const calls = await cluster.withClient(
        async (c) =>
          (
            await c.query<{ kind: string; n: number }>(
              `SELECT k.kind, (SELECT coalesce(sum(calls), 0)::int FROM pg_stat_statements WHERE query LIKE '%FROM public.writlocal\\_' || k.kind || '\\_%') AS n
                 FROM unnest(ARRAY['read', 'write']) AS k(kind)`,
            )
          ).rows,
        node,
      );
      expect(calls).toEqual([
        { kind: "read", n: 1 },
        { kind: "write", n: 1 },
      ]);
    } finally {
      await direct.end();
    }
    for (const p of agents) {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE agent_id = $1", [p.agent]);
      expect(rows[0]?.n).toBe(2);
    }
  }, 120_000);

  it("locks a batch's agreements by shard group, then agent, on the worker's own path and through the coordinator alike (one lock order: no deadlock between them)", async () => {
    // Two agents of one worker, a before b by id, b's shard group before a's (2 groups a worker: bounded).
    const seen: { agent: string; agreementId: string; shard: string; port: number }[] = [];
    let pair: [(typeof seen)[number], (typeof seen)[number]] | undefined;
    for (let n = 0; n < 16 && !pair; n++) {
      const w = await agentWithAgreement();
      const me = { ...w, port: (await workerOf(w.agent)).node.port };
      for (const o of seen) {
        const [a, b] = o.agent < me.agent ? [o, me] : [me, o];
        if (a.port === b.port && BigInt(b.shard) < BigInt(a.shard)) pair = [a, b];
      }
      seen.push(me);
    }
    if (!pair) throw new Error("no two agents of one worker whose shard order is not their id order in 16");
    const [a, b] = pair;
    const node = cluster.workers.find((w) => w.port === a.port) as CitusNode;
    const spends = [a, b].map((p, i) => ({
      i,
      ag: p.agent,
      did: null,
      agreement_id: p.agreementId,
      intent_id: "i1",
      action_id: `act-lock-order-${i}`,
      currency: "USD",
      agent_id: p.agent,
      parent: false,
      del: false,
      rev: null,
    }));
    const args = [[], [a.agreementId, b.agreementId], JSON.stringify(spends)];
    const lock = (id: { agent: string; agreementId: string }, nowait = "") =>
      `SELECT 1 FROM agreements WHERE agent_id = '${id.agent}' AND agreement_id = '${id.agreementId}' FOR NO KEY UPDATE ${nowait}`;
    const paths = [
      { name: "the worker's session (the direct path)", url: cluster.nodeUrl(node), sql: "SELECT * FROM writ_spend_read($1::text[], $2::text[], $3::jsonb)" },
      {
        name: "the coordinator, statement by statement",
        url: cluster.url(),
        sql: "SELECT * FROM writ_spend_read_citus_here($1::text[], $2::text[], $3::jsonb)",
      },
    ];
    for (const path of paths) {
      const [blocker, batch, probe] = [new pg.Client(cluster.url()), new pg.Client(path.url), new pg.Client(cluster.url())];
      await Promise.all([blocker, batch, probe].map((c) => c.connect()));
      try {
        await blocker.query("BEGIN");
        await blocker.query(lock(b));
        await batch.query("BEGIN");
        const read = batch.query(path.sql, args);
        // The batch waits for b's row (its first, in shard order) on the worker...
        await expect
          .poll(
            async () =>
              (
                await cluster.withClient(
                  (c) => c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('tuple', 'transactionid')"),
                  node,
                )
              ).rows[0]?.n,
            { timeout: 10_000, interval: 20 },
          )
          .toBeGreaterThan(0);
        // ...holding nothing of a's yet: in agent order it would hold a's row while it waits.
        await probe.query("BEGIN");
        await expect(
          probe.query(lock(a, "NOWAIT")).then((r) => r.rowCount),
          path.name,
        ).resolves.toBe(1);
        await probe.query("ROLLBACK");
        await blocker.query("ROLLBACK");
        expect((await read).rows.map((r: { agreement_agent: string }) => r.agreement_agent).sort()).toEqual([a.agent, b.agent]);
        await batch.query("ROLLBACK");
      } finally {
        await Promise.all([blocker, batch, probe].map((c) => c.end().catch(() => {})));
      }
    }
  }, 120_000);

  it("answers a session that waited while another made a worker's spend function: no error, the call runs through Citus (a race the money model found)", async () => {
    const agent = `agent-localfn-${randomBytes(4).toString("hex")}`;
    const port = (
      await pool.query<{ port: number }>(
        "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('delegations', $1::text)",
        [agent],
      )
    ).rows[0]?.port;
    const worker = cluster.workers.find((n) => n.port === port) as CitusNode;
    expect(worker).toBeDefined();
    await cluster.withClient(async (a) => {
      // Its name (made and rolled back, or made by an earlier test: then dropped, on this worker only).
      await a.query("BEGIN");
      const name = (await a.query<{ f: string | null }>("SELECT writ_citus_local_fn('read', ARRAY[$1]) AS f", [agent])).rows[0]?.f;
      await a.query("ROLLBACK");
      expect(name).toMatch(/^writlocal_read_/);
      await a.query("SET citus.enable_ddl_propagation = off");
      await a.query(`DROP FUNCTION IF EXISTS public.${a.escapeIdentifier(name as string)}`);
      await a.query("RESET citus.enable_ddl_propagation");
      await cluster.withClient(async (b) => {
        // b's transaction starts (and reads the catalog) before a makes the function.
        await b.query("BEGIN");
        expect((await b.query<{ f: string | null }>("SELECT to_regproc($1)::text AS f", [`public.${name}`])).rows[0]?.f).toBeNull();
        await a.query("BEGIN");
        expect((await a.query<{ f: string | null }>("SELECT writ_citus_local_fn('read', ARRAY[$1]) AS f", [agent])).rows[0]?.f).toBe(name);
        // b waits for a's lock, then finds the function made: NULL (run through Citus), not an error.
        const waited = b.query<{ f: string | null }>("SELECT writ_citus_local_fn('read', ARRAY[$1]) AS f", [agent]);
        // Polled (bounded): b is waiting for the advisory lock a holds.
        for (let i = 0; i < 250; i++) {
          const n = (await a.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0]?.n;
          if (n) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await a.query("COMMIT");
        // NULL while its catalog cache does not show a's function yet, else its name.
        expect([null, name]).toContain((await waited).rows[0]?.f ?? null);
        await b.query("COMMIT");
      }, worker);
      // The next transaction finds it.
      expect((await a.query<{ f: string | null }>("SELECT writ_citus_local_fn('read', ARRAY[$1]) AS f", [agent])).rows[0]?.f).toBe(name);
    }, worker);
  });

  // It stops a worker (and starts it again).
  it("revokes a delegation and its cascade to other agents' delegations on both workers: the rows and the markers written in one two-phase commit, the notices sent from the coordinator, the other process refusing at once", async () => {
    const [a, b] = serves as [ServeProcess, ServeProcess];
    const workerOf = async (agentId: string) =>
      (
        await pool.query<{ port: number }>(
          "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('delegations', $1::text)",
          [agentId],
        )
      ).rows[0]?.port;
    // A parent agent, then sub-agents until the subtree has a row on each worker (bounded).
    const parent = (await world.registerAgent(world.operatorKey)).agent_id;
    const subs: string[] = [];
    for (let i = 0; i < 16 && (subs.length < 2 || new Set(await Promise.all([parent, ...subs].map(workerOf))).size < 2); i++) {
      subs.push((await world.registerAgent(world.operatorKey)).agent_id);
    }
    const ports = new Set(await Promise.all([parent, ...subs].map(workerOf)));
    expect(ports.size).toBe(2);
    const now = Date.now();
    // Level n expires an hour before level n - 1 (a child never widens its parent).
    const expires = (level: number) => iso(now + (24 - level) * HOUR);
    const root = await storeAgreement(
      { ...world, agentId: parent },
      { mandates: [mandate(parent, "i1", { maximum_amount: 10, cumulative_maximum: 1000 })], delegation: { over: { expires_at: expires(0) } } },
    );
    const link = (id: string, agentId: string, level: number) => ({
      delegation_id: id,
      delegator: { ...PRINCIPAL },
      delegate: { agent_id: agentId },
      delegated_at: iso(now - 2 * HOUR),
      expires_at: expires(level),
      scope: { currency: "USD" },
    });
    // Each sub-agent's delegation is a child of the one before it: the chain grows by a link per level.
    const chain = [link(root.delegationId as string, parent, 0)];
    const ids = [root.delegationId as string];
    for (const [i, sub] of subs.entries()) {
      const d = await storeAgreement(
        { ...world, agentId: sub },
        {
          mandates: [mandate(sub, "i1", { maximum_amount: 10, cumulative_maximum: 1000 })],
          delegation: { over: { delegation_chain: [...chain], expires_at: expires(i + 1) } },
        },
      );
      chain.push(link(d.delegationId as string, sub, i + 1));
      ids.push(d.delegationId as string);
    }
    // Both processes hold every agent's snapshot.
    for (const s of serves) for (const agent of [parent, ...subs]) await untilAllowing(s.url, agent, world.operatorKey);
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: cluster.url() }); // the coordinator only
    await listener.connect();
    try {
      listener.on("notification", (n) => heard.push(`${n.channel} ${String(n.payload)}`));
      await listener.query("LISTEN writ_changes; LISTEN writ_revocations");
      const r = await call(a.url, "DELETE", `/svc/delegations/${root.delegationId as string}`, admin, { reason: "citus cascade" });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ revoked: true, revoked_ids: [...ids].sort() });
      await listener.query("SELECT 1"); // the notices (sent at the revocation's commit) arrive before this answer
      await expect.poll(() => heard.length, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(subs.length + 2);
      // Each revoked row's agent is notified from the coordinator, and so are the revoked ids.
      for (const agent of [parent, ...subs]) expect(heard).toContain(`writ_changes agent:${agent}`);
      expect(
        heard
          .filter((h) => h.startsWith("writ_revocations "))
          .flatMap((h) => (JSON.parse(h.slice(17)) as { ids: string[] }).ids)
          .sort(),
      ).toEqual([...ids].sort());
    } finally {
      await listener.end();
    }
    // The other process refuses every agent of the subtree at once (bounded polling, not a sleep).
    for (const agent of [parent, ...subs]) {
      let last: Answer | null = null;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        last = await call(b.url, "POST", "/v1/verify", world.operatorKey, { agent_id: agent, action: action({ amount: 1 }) });
        if (last.body.verdict !== "ALLOW") break;
        await new Promise((res) => setTimeout(res, 50));
      }
      expect(last?.body, agent).toMatchObject({ verdict: "DENY", reasons: ["DELEGATION_REVOKED"] });
    }
    // The rows are revoked on their workers, and every node's copy of the markers holds the ids.
    const rows = await pool.query<{ id: string; status: string }>(
      "SELECT delegation_id AS id, status FROM delegations WHERE delegation_id = ANY($1::text[]) ORDER BY 1",
      [ids],
    );
    expect(rows.rows).toEqual([...ids].sort().map((id) => ({ id, status: "revoked" })));
    for (const node of [cluster.coordinator, ...cluster.workers]) {
      const n = await cluster.withClient(
        (c) => c.query<{ n: number }>("SELECT count(*)::int AS n FROM delegation_revocations WHERE delegation_id = ANY($1::text[])", [ids]),
        node,
      );
      expect(n.rows[0]?.n, node.name).toBe(ids.length);
    }
    // A repeat revokes nothing; a delegation declared under the revoked root is stored revoked, and so is one declared revoked.
    const again = await call(b.url, "DELETE", `/svc/delegations/${root.delegationId as string}`, admin, {});
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ revoked: false, revoked_ids: [] });
    const late = await storeAgreement(
      { ...world, agentId: subs[0] as string },
      {
        mandates: [mandate(subs[0] as string, "i2")],
        delegation: { over: { delegation_chain: [chain[0] as (typeof chain)[number]], expires_at: expires(1) } },
      },
    );
    const declared = await storeAgreement({ ...world, agentId: parent }, { mandates: [mandate(parent, "i3")], delegation: { over: { status: "revoked" } } });
    const states = await pool.query<{ status: string }>("SELECT status FROM delegations WHERE delegation_id = ANY($1::text[])", [
      [late.delegationId, declared.delegationId],
    ]);
    expect(states.rows.map((x) => x.status)).toEqual(["revoked", "revoked"]);
  }, 120_000);

  it("prunes old decisions, period events and hour counters on every shard (deleted by key, never by ctid, which Citus refuses on a distributed table)", async () => {
    const old = (agent: string, action: string, days: number) =>
      pool.query(
        `INSERT INTO verify_decisions (agent_id, action_id, agreement_id, request_hash, decision, created_at)
         VALUES ($1, $2, NULL, $3, '{"verdict":"DENY"}', now() - make_interval(days => $4::int))`,
        [agent, action, `sha256:${"0".repeat(64)}`, days],
      );
    // Agents spread over both workers' shards: old rows on each, and one fresh row that stays.
    for (let i = 0; i < 8; i++) await old(`agent-prune-${i}`, "old", 40);
    await old("agent-prune-0", "fresh", 1);
    await pool.query(
      `INSERT INTO period_events (agent_id, agreement_id, action_id, owner, currency, at, amount_minor, allowed_minor, windows, keep_until)
       SELECT 'agent-prune-' || i, 'agr-prune', 'old', '["intent","agent-prune-' || i || '","agr-prune","i1"]', 'USD', now() - interval '3 days', 1, 1, '[]', now() - interval '1 day'
       FROM generate_series(0, 7) i`,
    );
    // Hour counters of rolling windows: 400 days old (they go) and an hour ago (it stays), and a
    // calendar counter as old (it stays).
    await pool.query(
      `INSERT INTO period_spend (agent_id, owner, currency, window_kind, window_start, spent_minor, payments)
       SELECT 'agent-prune-' || i, '["intent","agent-prune-' || i || '","agr-prune","i1"]', 'USD', k, date_trunc('hour', now()) - d, 1, 1
       FROM generate_series(0, 7) i, (VALUES ('bucket@PT1H', interval '400 days'), ('bucket@PT1H', interval '1 hour'), ('day@UTC', interval '400 days')) v(k, d)`,
    );
    const r = await pruneOnce(pool, { decisionDays: 30, webhookDays: 30, batchSize: 3 });
    expect(r.busy).toBe(false);
    expect(r.deleted.verify_decisions).toBe(8);
    expect(r.deleted.period_events).toBe(8);
    const { rows } = await pool.query<{ agent_id: string; action_id: string }>(
      "SELECT agent_id, action_id FROM verify_decisions WHERE agent_id LIKE 'agent-prune-%'",
    );
    expect(rows).toEqual([{ agent_id: "agent-prune-0", action_id: "fresh" }]);
    expect((await pool.query("SELECT 1 FROM period_events WHERE agent_id LIKE 'agent-prune-%'")).rowCount).toBe(0);
    expect(r.deleted.period_spend).toBe(8);
    const left = await pool.query<{ window_kind: string; n: string }>(
      "SELECT window_kind, count(*)::text AS n FROM period_spend WHERE agent_id LIKE 'agent-prune-%' GROUP BY 1 ORDER BY 1",
    );
    expect(left.rows).toEqual([
      { window_kind: "bucket@PT1H", n: "8" },
      { window_kind: "day@UTC", n: "8" },
    ]);
  });

  it("serves nothing from the caches while a worker cannot be reached, and hears that worker again after its restart", async () => {
    const [, b] = serves as [ServeProcess, ServeProcess];
    const worker = cluster.workers[0] as CitusCluster["workers"][number];
    const path = `/v1/orgs/${world.operatorOrg}/keys`;
    const first = await world.issueKey(world.operatorOrg);
    expect((await call(b.url, "GET", path, first.token)).status).toBe(200); // cached in b
    await silently("UPDATE api_keys SET revoked_at = now() WHERE key_id = $1", [first.key_id]);
    expect((await call(b.url, "GET", path, first.token)).status).toBe(200); // still the cached credential
    await cluster.stopNode(worker);
    try {
      // A notice of that worker could now be missed: b reads through, and sees the revocation.
      expect(await untilStatus(b.url, path, first.token, 401)).toBe(401);
    } finally {
      await cluster.startNode(worker);
    }
    // Without a restart of b: once it listens on the worker again it caches again, and a notice
    // sent on that worker reaches it.
    const second = await world.issueKey(world.operatorOrg);
    const deadline = Date.now() + 30_000;
    for (;;) {
      expect((await call(b.url, "GET", path, second.token)).status).toBe(200);
      await silently("UPDATE api_keys SET revoked_at = now() WHERE key_id = $1", [second.key_id]);
      const cached = (await call(b.url, "GET", path, second.token)).status === 200;
      if (cached) break; // b serves from its cache: it listens on every worker again
      expect(Date.now() < deadline, "b caches again after the worker's restart").toBe(true);
      await retrying(() => pool.query("UPDATE api_keys SET revoked_at = NULL WHERE key_id = $1", [second.key_id]));
      await new Promise((r) => setTimeout(r, 100));
    }
    await cluster.withClient((c) => c.query("NOTIFY writ_changes, 'keys'"), worker);
    expect(await untilStatus(b.url, path, second.token, 401)).toBe(401);
  }, 120_000);

  // Last: it stops a worker under load (and starts it again).
  it("keeps the ALLOWs of agents not on a stopped worker, refuses (503 or fail-closed) those on it, recovers after its restart, and loses no acknowledged ALLOW", async () => {
    const [a, b] = serves as [ServeProcess, ServeProcess];
    const stopped = cluster.workers[1] as CitusCluster["workers"][number];
    const agents: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { agent_id } = await world.registerAgent(world.operatorKey);
      await storeAgreement({ ...world, agentId: agent_id }, { mandates: [mandate(agent_id, "i1", { maximum_amount: 10, cumulative_maximum: 100_000 })] });
      agents.push(agent_id);
    }
    // Where each agent's rows live: the worker of its delegations' shard once the per-agent
    // tables are distributed by agent_id; today they are plain tables of the coordinator
    // (docs/scale.md), so no agent is on the stopped worker and every agent must keep its ALLOWs.
    const distributed = (await pool.query("SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'delegations'::regclass AND partmethod = 'h'")).rowCount === 1;
    const home = new Map<string, number | null>();
    for (const agent of agents) {
      if (!distributed) {
        home.set(agent, null);
        continue;
      }
      const { rows } = await pool.query<{ port: number }>(
        "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('delegations', $1::text)",
        [agent],
      );
      home.set(agent, rows[0]?.port ?? null);
    }
    const onStopped = agents.filter((x) => home.get(x) === stopped.port);
    const elsewhere = agents.filter((x) => home.get(x) !== stopped.port);
    if (!distributed) expect(onStopped).toEqual([]);
    const allowed = new Map<string, number>(agents.map((x) => [x, 0]));
    let n = 0;
    /** One verify of `agent` through either process; counts the ALLOWs it acknowledged. */
    const verify = async (agent: string): Promise<Answer> => {
      const r = await call((n++ % 2 === 0 ? a : b).url, "POST", "/v1/verify", world.operatorKey, { agent_id: agent, action: action({ amount: 1 }) });
      if (r.status === 200 && r.body.verdict === "ALLOW") allowed.set(agent, (allowed.get(agent) ?? 0) + 1);
      return r;
    };
    /** `rounds` verifies of every agent, side by side (bounded in count; each call bounded in time). */
    const load = async (rounds: number) => {
      const answers = new Map<string, Answer[]>(agents.map((x) => [x, []]));
      for (let i = 0; i < rounds; i++) await Promise.all(agents.map(async (x) => answers.get(x)?.push(await verify(x))));
      return answers;
    };
    const before = await load(3);
    for (const x of agents)
      expect(
        before.get(x)?.map((r) => r.body.verdict),
        x,
      ).toContain("ALLOW");
    await resetStatements();
    await cluster.stopNode(stopped);
    let during: Map<string, Answer[]>;
    try {
      during = await load(5);
    } finally {
      await cluster.startNode(stopped);
    }
    // The others' spends went to their worker directly (WRIT_CITUS_DIRECT), none through the coordinator.
    const live = cluster.workers.find((x) => x !== stopped) as CitusNode;
    if (distributed && elsewhere.length > 0) {
      expect(await spendReadCalls(live)).toBeGreaterThan(0);
      expect(await spendReadCalls(cluster.coordinator)).toBe(0);
    }
    for (const x of elsewhere)
      expect(
        during.get(x)?.map((r) => `${r.status} ${String(r.body.verdict)}`),
        x,
      ).toEqual(Array(5).fill("200 ALLOW"));
    for (const x of onStopped)
      for (const r of during.get(x) ?? [])
        expect(r.status === 503 || (r.status === 200 && r.body.verdict !== "ALLOW"), `${x}: ${r.status} ${JSON.stringify(r.body)}`).toBe(true);
    // Recovery without restarting Writ: every agent is allowed again (bounded).
    for (const x of agents) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await verify(x);
        if (r.status === 200 && r.body.verdict === "ALLOW") break;
        expect(Date.now() < deadline, `${x} allowed again after the restart: ${r.status} ${JSON.stringify(r.body)}`).toBe(true);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    // No acknowledged ALLOW lost (and none recorded that was not acknowledged).
    const { rows } = await pool.query<{ agent: string; n: number }>(
      "SELECT e.agent_id AS agent, count(*)::int AS n FROM ledger_entries e WHERE e.agent_id = ANY($1::text[]) AND e.outcome = 'allowed' GROUP BY 1",
      [agents],
    );
    expect(Object.fromEntries(rows.map((r) => [r.agent, r.n]))).toEqual(Object.fromEntries(allowed));
  }, 180_000);
});
