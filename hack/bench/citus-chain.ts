/**
 * What a delegation chain across agents costs on a Citus cluster (docs/scale.md, "A delegation
 * chain across agents"): the spend transaction of the store (`recordAllowedSpend`, the ALLOW's
 * write path, without HTTP or the evaluation) in a closed loop, for
 *   (a) one agent: an agreement under its own delegation with a cumulative maximum (one worker);
 *   (b) a child of another agent whose parent (cumulative maximum) is on the OTHER worker: the
 *       parent's row locked and its running total raised there, a two-phase commit;
 *   (c) the same chain with the parent on the child's worker (two agents, one worker);
 * each with 1 and then BENCH_CHAIN_CONNECTIONS (default 4) callers, spread over
 * BENCH_CHAIN_AGENTS (default 8) agents or children (one parent for all children: its row lock is
 * shared by its subtree). Prints ALLOW/s, p50 and p99 and the workers PREPAREd per ALLOW
 * (pg_dist_transaction; the cluster's 2PC recovery is off). BENCH_CHAIN_PLAIN=1 adds the same
 * lines on Debian's PostgreSQL 15 alone (the same binaries; (c) is (b) there).
 *
 *   npx tsx hack/bench/citus-chain.ts            (BENCH_SECONDS per line, default 5)
 *
 * The cluster is hack/citus/cluster.ts's (coordinator + 2 workers on 127.0.0.1), stopped by pid.
 */
import { sha256 } from "../../src/core/canonical/index.js";
import { parentLink, type Delegation } from "../../src/core/delegation/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { recordAllowedSpend, type AllowedSpend } from "../../src/store/ledger/index.js";
import { migrate } from "../../src/store/migrate.js";
import { createOrg } from "../../src/store/orgs.js";
import { createPool } from "../../src/store/pool.js";
import { provisionCitus, startCitusCluster, type CitusCluster } from "../citus/cluster.js";
import { storeGrant } from "./grant.js";
import { closedLoop } from "./verify/loop.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const AGENTS = Number(process.env.BENCH_CHAIN_AGENTS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CHAIN_CONNECTIONS ?? 4);
const PLAIN = process.env.BENCH_CHAIN_PLAIN === "1";
const BIG = 1_000_000_000;
const principalKey = signerFromSeed(sha256("writ bench chain principal").toString("hex"));

type Pool = ReturnType<typeof createPool>;

interface Grant {
  agentId: string;
  agreementId: string;
  delegationId: string;
  record: Delegation;
}

let seq = 0;

/** Stores agent `agentId` with one agreement under a delegation (`chain` above it, cumulative maximum `BIG`). */
async function grant(pool: Pool, orgId: string, agentId: string, chain: Delegation["delegation_chain"]): Promise<Grant> {
  const n = seq++;
  const { delegation } = await storeGrant(pool, {
    orgId,
    agentId,
    agreementId: `agr-chain-${n}`,
    delegationId: `del-chain-${n}`,
    principal: { id: "biz_bench", key: principalKey, agentPrincipalId: "prn_bench" },
    purpose: "bench purchases",
    cumulative: BIG,
    scope: { cumulative_maximum: BIG },
    chain,
  });
  return { agentId, agreementId: `agr-chain-${n}`, delegationId: delegation.delegation_id, record: delegation };
}

/** A spend of 1 USD of `g` (with the chain of `parent` above it, when given). */
function spend(g: Grant, i: number, parent?: Grant): AllowedSpend {
  return {
    agreementId: g.agreementId,
    agentId: g.agentId,
    intentId: "i1",
    actionId: `act-${g.agentId}-${i}`,
    amountMinor: 100n,
    currency: "USD",
    at: new Date().toISOString(),
    limits: {
      delegation: { delegationId: g.delegationId, cumulativeMinor: BigInt(BIG) * 100n, currency: "USD" },
      ...(parent ? { chain: { delegationId: g.delegationId, ancestorIds: [parent.delegationId], currency: "USD", amountMinor: 100n } } : {}),
    },
  };
}

/** Agent ids whose shards are on the worker of port `port` (any, without Citus). */
async function idsOn(pool: Pool, citus: boolean, prefix: string, port: number | null, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; out.length < n && i < 10_000; i++) {
    const id = `agent-${prefix}-${i}`;
    if (!citus) {
      out.push(id);
      continue;
    }
    const { rows } = await pool.query<{ port: number }>(
      "SELECT nodeport AS port FROM citus_shards WHERE shardid = get_shard_id_for_distribution_column('delegations', $1::text)",
      [id],
    );
    if (rows[0]?.port === port) out.push(id);
  }
  return out;
}

async function runOn(cluster: CitusCluster, label: string, citus: boolean): Promise<void> {
  await migrate(cluster.url());
  const pool = createPool(cluster.url(), { max: CONNECTIONS + 2 });
  try {
    const org = await createOrg(pool, { name: "bench chain", org_type: "agent_operator" }, new Date());
    const [w1, w2] = cluster.workers.map((w) => w.port);
    const one = citus ? (w1 as number) : null;
    const other = citus ? (w2 as number) : null;
    const lone = await Promise.all((await idsOn(pool, citus, "lone", one, AGENTS)).map((id) => grant(pool, org.org_id, id, [])));
    const [parentId] = await idsOn(pool, citus, "parent", one, 1);
    const parent = await grant(pool, org.org_id, parentId as string, []);
    const far = [];
    for (const id of await idsOn(pool, citus, "far", other, AGENTS)) far.push(await grant(pool, org.org_id, id, [parentLink(parent.record)]));
    const [nearParentId] = await idsOn(pool, citus, "nearparent", one, 1);
    const nearParent = await grant(pool, org.org_id, nearParentId as string, []);
    const near = [];
    for (const id of await idsOn(pool, citus, "near", one, AGENTS)) near.push(await grant(pool, org.org_id, id, [parentLink(nearParent.record)]));

    const twoPhase = async () =>
      citus ? ((await pool.query<{ n: number }>("SELECT count(DISTINCT gid)::int AS n FROM pg_dist_transaction")).rows[0]?.n ?? 0) : 0;
    const kinds: [string, Grant[], Grant | undefined][] = [
      ["(a) one agent", lone, undefined],
      [citus ? "(b) chain, parent on the other worker" : "(b) chain, parent another agent", far, parent],
      ...(citus ? ([["(c) chain, parent on the same worker", near, nearParent]] as [string, Grant[], Grant][]) : []),
    ];
    let n = 0;
    for (const [name, grants, above] of kinds) {
      for (const connections of [1, CONNECTIONS]) {
        const before = await twoPhase();
        const r = await closedLoop(connections, SECONDS, async (i) => {
          const g = grants[i % grants.length] as Grant;
          const out = await recordAllowedSpend(pool, spend(g, n++, above));
          return out.recorded ? "ALLOW" : out.reason;
        });
        const prepared = (await twoPhase()) - before;
        const allowed = r.verdicts.ALLOW ?? 0;
        const other = Object.entries(r.verdicts).filter(([k]) => k !== "ALLOW");
        console.log(
          `${label} ${name.padEnd(40)} x${connections}: ${(allowed / SECONDS).toFixed(0).padStart(5)} ALLOW/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms` +
            (citus ? `  PREPAREs/ALLOW ${(allowed > 0 ? prepared / allowed : 0).toFixed(2)}` : "") +
            (other.length > 0 || r.errors > 0 ? `  other ${JSON.stringify(Object.fromEntries(other))} errors ${r.errors}` : ""),
        );
      }
    }
  } finally {
    await pool.end();
  }
}

const tools = provisionCitus();
if (!tools) throw new Error("Citus is not installed and its source is not there (hack/citus/provision.sh)");
console.log(`spend transaction of the store, closed loop ${SECONDS} s per line, ${AGENTS} agents/children per kind, 1 and ${CONNECTIONS} callers`);
const cluster = await startCitusCluster({ tools, parameters: { "citus.shard_count": 4, "citus.recover_2pc_interval": -1 } });
try {
  await runOn(cluster, "(C)", true);
} finally {
  await cluster.stop();
}
if (PLAIN) {
  const plain = await startCitusCluster({ tools, plain: true });
  try {
    await runOn(plain, "(P)", false);
  } finally {
    await plain.stop();
  }
}
