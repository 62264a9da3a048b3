/**
 * What one spend transaction costs the Postgres backend that runs it, on Debian's PostgreSQL 15
 * alone (P) and on a worker of a Citus cluster (W: coordinator + 2 workers, Citus's 32 shards,
 * BENCH_CITUS_SHARDS to change it), by the shape of the batch (docs/scale.md, "Costs, and past
 * this machine"): the statements writ serve sends on the direct path (`writ_spend_read`, then
 * `writ_spend_write`, src/store/ledger/spend.ts) for allowed spends of N agents, one spend each,
 * in a transaction that is rolled back (so every round measures the same rows), on one
 * connection, round after round; the figure is that backend's CPU (/proc/<pid>/stat) per transaction and
 * per spend (clock ticks of 10 ms, over BENCH_BATCH_SECONDS of rounds a line, default 3). No HTTP, no evaluation, no load generator, no contention: the CPU of the statements
 * alone, far steadier from run to run than bench:verify's closed loops, whose C/P it explains.
 *
 *   npm run bench:citus-batch
 *
 * Lines: an empty transaction (BEGIN; ROLLBACK); 1 agent; 9 agents of one shard group; 9 agents
 * as they come (spread over the worker's shard groups, as a group commit's batch is); 30 as they
 * come. On P the same agents (P has no shards). W's agents are those of its first worker.
 * The worker's spend functions are made (committed) before the rounds, as a worker has them after
 * its first batches. Both clusters are hack/citus/cluster.ts's, on 127.0.0.1, stopped by pid.
 */
import pg from "pg";
import { migrate } from "../../src/store/migrate.js";
import { provisionCitus, startCitusCluster, type CitusCluster } from "../citus/cluster.js";
import { cpuPerRound } from "./proc-cpu.js";

const SECONDS = Number(process.env.BENCH_BATCH_SECONDS ?? 3);
const AGENTS = 1000;
const SHARDS: Record<string, number> = process.env.BENCH_CITUS_SHARDS ? { "citus.shard_count": Number(process.env.BENCH_CITUS_SHARDS) } : {};
const PARAMETERS = { max_connections: "200", shared_buffers: "256MB" };
const HASH = `sha256:${"a".repeat(64)}`;

type Shape = { name: string; agents: (pool: Agents) => string[] };
type Agents = { all: string[]; oneGroup: string[] };

const SHAPES: Shape[] = [
  { name: "empty transaction (BEGIN; ROLLBACK)", agents: () => [] },
  { name: "1 agent", agents: (a) => a.all.slice(0, 1) },
  { name: "9 agents of one shard group", agents: (a) => a.oneGroup.slice(0, 9) },
  { name: "9 agents as they come", agents: (a) => a.all.slice(0, 9) },
  { name: "30 agents as they come", agents: (a) => a.all.slice(0, 30) },
];

/** The two statements of a batch's spend transaction (one allowed spend per agent, its agreement's first entry). */
function batchSql(agents: readonly string[]): string[] {
  if (agents.length === 0) return [];
  const sorted = [...agents].sort();
  const agreement = (a: string) => `agr-${a}`;
  const read = sorted.map((ag, i) => ({
    i,
    ag,
    did: null,
    agreement_id: agreement(ag),
    intent_id: "i1",
    action_id: `act-${i}`,
    currency: "USD",
    agent_id: ag,
    parent: false,
    del: false,
    rev: 1,
  }));
  const rows = sorted.map((ag, i) => ({
    ag,
    a: agreement(ag),
    e: { sequence: 1, action_id: `act-${i}`, intent_id: "i1", currency: "USD", entry_hash: HASH, prev_entry_hash: null },
    m: "100",
    g: ag,
    h: HASH,
    d: { verdict: "ALLOW" },
  }));
  const lit = (v: unknown) => `'${JSON.stringify(v).replaceAll("'", "''")}'`;
  return [
    `SELECT * FROM writ_spend_read(ARRAY[]::text[], ARRAY[${sorted.map((a) => `'${agreement(a)}'`).join(",")}]::text[], ${lit(read)}::jsonb)`,
    `SELECT * FROM writ_spend_write(${lit(rows)}::jsonb)`,
  ];
}

/** Backend CPU µs per transaction of `agents`' batch, round after round on `client` for SECONDS (after 20 unmeasured rounds). */
async function measure(client: pg.Client, pid: number, agents: readonly string[]): Promise<{ us: number; rounds: number }> {
  const statements = ["BEGIN", ...batchSql(agents), "ROLLBACK"].join(";\n");
  for (let i = 0; i < 20; i++) await client.query(statements);
  return cpuPerRound(pid, SECONDS, async () => {
    await client.query(statements);
  });
}

async function prepare(cluster: CitusCluster, citus: boolean): Promise<{ url: string; agents: Agents }> {
  await migrate(cluster.url());
  const all = Array.from({ length: AGENTS }, (_, i) => `agent-${String(i + 1).padStart(4, "0")}`);
  await cluster.withClient(async (c) => {
    // One statement per agent: on Citus each is a one-shard insert (the change-notice trigger refuses a two-phase commit).
    for (const a of all)
      await c.query(
        `INSERT INTO agreements (agreement_id, agent_id, status, record) VALUES ($1, $2, 'active', '{"mandates":[{"intent_id":"i1","currency":"USD"}]}')`,
        [`agr-${a}`, a],
      );
  });
  if (!citus) return { url: cluster.url(), agents: { all, oneGroup: all } };
  const worker = cluster.workers[0];
  if (!worker) throw new Error("no worker");
  const placed = await cluster.withClient(
    async (c) =>
      (
        await c.query<{ a: string; s: string }>(
          `SELECT a, get_shard_id_for_distribution_column('delegations', a)::text AS s FROM unnest($1::text[]) AS a
            WHERE EXISTS (SELECT 1 FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
                           WHERE p.shardid = get_shard_id_for_distribution_column('delegations', a) AND n.nodeport = $2)`,
          [all, worker.port],
        )
      ).rows,
  );
  const byShard = new Map<string, string[]>();
  for (const r of placed) byShard.set(r.s, [...(byShard.get(r.s) ?? []), r.a]);
  const oneGroup = [...byShard.values()].sort((x, y) => y.length - x.length)[0] ?? [];
  const mine = placed.map((r) => r.a);
  // The spend functions, made and committed as after a worker's first batches.
  await cluster.withClient((c) => c.query("SELECT writ_citus_local_fn('read', $1::text[]), writ_citus_local_fn('write', $1::text[])", [mine]), worker);
  return { url: cluster.nodeUrl(worker), agents: { all: mine, oneGroup } };
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

async function main(): Promise<void> {
  const tools = provisionCitus();
  if (!tools) {
    console.log("skipped: Citus is not installed and its source is not there (hack/citus/provision.sh, WRIT_CITUS_SOURCE)");
    return;
  }
  let plain: CitusCluster | undefined;
  let cluster: CitusCluster | undefined;
  const clients: pg.Client[] = [];
  try {
    plain = await startCitusCluster({ tools, plain: true, parameters: PARAMETERS });
    cluster = await startCitusCluster({ tools, workers: 2, parameters: { ...PARAMETERS, ...SHARDS } });
    const sides = [
      { name: "P", ...(await prepare(plain, false)) },
      { name: "W", ...(await prepare(cluster, true)) },
    ];
    const connected = await Promise.all(
      sides.map(async (s) => {
        const client = new pg.Client({ connectionString: s.url });
        await client.connect();
        clients.push(client);
        const pid = (await client.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]?.p;
        if (pid === undefined) throw new Error("no backend pid");
        return { ...s, client, pid };
      }),
    );
    console.log(
      `backend CPU per spend transaction (read + write, rolled back), ${SECONDS} s of rounds a line: P = PostgreSQL 15 alone, W = a worker of Citus (${SHARDS["citus.shard_count"] ?? 32} shards, 2 workers)`,
    );
    for (const shape of SHAPES) {
      const [p, w] = [
        await measure(connected[0]!.client, connected[0]!.pid, shape.agents(connected[0]!.agents)),
        await measure(connected[1]!.client, connected[1]!.pid, shape.agents(connected[1]!.agents)),
      ];
      const n = shape.agents(connected[1]!.agents).length;
      const cell = (m: { us: number; rounds: number }) => `${fmt(m.us).padStart(6)} us${(n > 0 ? `  (${fmt(m.us / n)} a spend)` : "").padEnd(18)}`;
      console.log(
        `${shape.name.padEnd(38)} P ${cell(p)} W ${cell(w)} W/P ${p.us > 0 ? (w.us / p.us).toFixed(2) : "-"}   (${fmt(p.rounds)} and ${fmt(w.rounds)} rounds)`,
      );
    }
  } finally {
    for (const c of clients) await c.end().catch(() => {});
    await plain?.stop();
    await cluster?.stop();
  }
}

await main();
