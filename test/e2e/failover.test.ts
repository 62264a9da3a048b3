/**
 * Losing the Postgres primary under load loses no ALLOW: a real two-node Patroni cluster
 * (Debian's patroni, etcd and PostgreSQL 15 on 127.0.0.1, synchronous mode; hack/patroni/),
 * two `writ serve` processes on a multi-host DATABASE_URL with WRIT_SYNCHRONOUS_COMMIT =
 * remote_apply and DATABASE_READ_URL preferring the standby, verify ALLOWs and log appends
 * under load from this process (bounded in count and time).
 *
 * Case 1 SIGKILLs the primary's postmaster; Patroni (primary_start_timeout 0) promotes the
 * synchronous standby, and the old primary later rejoins as the standby. Case 2 SIGKILLs the
 * primary's Patroni and its postmaster; the leader key expires (ttl 10 s) and the standby is
 * promoted. After each case:
 * - no answer other than 200 and 503 (a 503 is `{error}`); no ALLOW answered while no primary
 *   was reachable without its entry being on the new primary;
 * - every action any client was ALLOWed is in the new primary's ledger, every agreement's
 *   chain verifies, and no intent is spent past its cumulative maximum (two agents have a
 *   tight one that the load reaches);
 * - every signed tree head handed out (append answers and GET /v1/log/head) is consistent with
 *   the new primary's log (RFC 9162 consistency proofs from the new primary's store);
 * - the 503 window and the time until ALLOWs resume are measured and printed.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spentByIntent, verifyLedger } from "../../src/core/agreement/index.js";
import { hashBytes, type HashString } from "../../src/core/canonical/index.js";
import { verifyConsistency } from "../../src/core/tlog/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { consistencyProofFor, latestTreeHead } from "../../src/store/log-read.js";
import { migrate } from "../../src/store/migrate.js";
import { startPatroniCluster, type PatroniCluster, type PatroniNode } from "../../hack/patroni/cluster.js";
import { seed, type SeededAgent } from "../../hack/bench/verify/seed.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";

const WORKERS = 6;
/** Bounds of one case's load. */
const CASE_MAX_REQUESTS = 30_000;
const CASE_MAX_MS = 120_000;
/** Intents of the tight agents: 1 USD a request spends it before the kill (waited for). */
const TIGHT_CUMULATIVE = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: PatroniCluster | undefined;
const serves: ServeProcess[] = [];
const admin = `admin-${randomBytes(12).toString("hex")}`;
const appendToken = `append-${randomBytes(12).toString("hex")}`;
let token = "";
let agents: SeededAgent[] = [];
const cumulativeOf = (i: number) => (i % 6 === 5 ? TIGHT_CUMULATIVE : 1_000_000);

interface Answer {
  kind: "verify" | "append" | "head";
  server: number;
  sentAt: number;
  answeredAt: number;
  status: number;
  body: Record<string, unknown>;
  actionId?: string;
  agreementId?: string;
}

interface Head {
  tree_size: number;
  root: HashString;
}

const heads: Head[] = [];

async function call(
  server: number,
  method: string,
  path: string,
  bearer: string | null,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const s = serves[server] as ServeProcess;
  const headers: Record<string, string> = {};
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  try {
    const r = await fetch(`${s.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await r.text();
    try {
      return { status: r.status, body: JSON.parse(text) as Record<string, unknown> };
    } catch {
      return { status: r.status, body: { unparsed: text } };
    }
  } catch (e) {
    // No answer at all (the process died, or the request timed out): a failure of its own kind.
    return { status: 0, body: { failed: String(e) } };
  }
}

let actions = 0;
async function verifyOnce(server: number, agent: SeededAgent): Promise<Answer> {
  const actionId = `fo-${process.pid}-${++actions}`;
  const sentAt = Date.now();
  const r = await call(server, "POST", "/v1/verify", token, {
    agent_id: agent.agentId,
    action: { action_id: actionId, action_type: "purchase", amount: 1, currency: "USD", proposed_at: new Date().toISOString(), merchant: "m-failover" },
  });
  return { kind: "verify", server, sentAt, answeredAt: Date.now(), ...r, actionId, agreementId: agent.agreementId };
}

async function appendOnce(server: number, n: number): Promise<Answer> {
  const sentAt = Date.now();
  const r = await call(server, "POST", "/v1/log/entries", appendToken, { kind: "incident", body: { failover_test: n, at: new Date().toISOString() } });
  const head = r.body.tree_head as Head | undefined;
  if (r.status === 200 && head) heads.push({ tree_size: head.tree_size, root: head.root });
  return { kind: "append", server, sentAt, answeredAt: Date.now(), ...r };
}

async function headOnce(server: number): Promise<Answer> {
  const sentAt = Date.now();
  const r = await call(server, "GET", "/v1/log/head", null);
  if (r.status === 200) heads.push({ tree_size: r.body.tree_size as number, root: r.body.root as HashString });
  return { kind: "head", server, sentAt, answeredAt: Date.now(), ...r };
}

/** Load from this process until `stop()` or its bounds; answers in order of arrival. */
function startLoad(pool: readonly SeededAgent[]): { answers: Answer[]; stop(): Promise<void> } {
  const answers: Answer[] = [];
  let stopped = false;
  const deadline = Date.now() + CASE_MAX_MS;
  const more = () => !stopped && Date.now() < deadline && answers.length < CASE_MAX_REQUESTS;
  let n = 0;
  const verifiers = Array.from({ length: WORKERS }, async (_, w) => {
    while (more()) {
      const a = await verifyOnce(w % 2, pool[n++ % pool.length] as SeededAgent);
      answers.push(a);
      // A refusal answers at once: pace the loop so an outage is not a busy loop.
      if (a.status !== 200) await sleep(10);
    }
  });
  const logger = (async () => {
    for (let i = 0; more(); i++) {
      answers.push(await appendOnce(i % 2, i));
      answers.push(await headOnce((i + 1) % 2));
      await sleep(20);
    }
  })();
  const all = Promise.all([...verifiers, logger]);
  return {
    answers,
    async stop() {
      stopped = true;
      await all;
    },
  };
}

/** Waits (bounded) until `cond` holds; returns the time it first held. */
async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}\n${cluster?.nodes.map((n) => `${n.name}:\n${n.output().slice(-3000)}`).join("\n")}\n${serves.map((s, i) => `serve ${i}:\n${s.output().slice(-3000)}`).join("\n")}`,
      );
    await sleep(50);
  }
  return Date.now();
}

beforeAll(async () => {
  cluster = await startPatroniCluster({ log: (l) => console.log(`patroni: ${l}`) });
  await migrate(cluster.url());
  const env = {
    DATABASE_URL: cluster.url("read-write"),
    DATABASE_READ_URL: cluster.url("prefer-standby"),
    WRIT_SYNCHRONOUS_COMMIT: "remote_apply",
    BUR_ADMIN_TOKEN: admin,
    SVC_APPEND_TOKEN: appendToken,
    SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"),
    BUR_WEBHOOK_WORKER: "0",
    LOG_LEVEL: "warn",
  };
  for (let i = 0; i < 2; i++) serves.push(await startServeProcess({ env }));
  const seeded = await seed((serves[0] as ServeProcess).url, cluster.url(), admin, 12, {
    prefix: `fo${randomBytes(3).toString("hex")}`,
    cumulative: cumulativeOf,
  });
  token = seeded.operatorKey;
  agents = seeded.agents;
  for (let s = 0; s < 2; s++) {
    await until(`writ serve ${s} to ALLOW`, async () => (await verifyOnce(s, agents[0] as SeededAgent)).body.verdict === "ALLOW", 60_000);
  }
}, 300_000);

afterAll(async () => {
  for (const s of serves) await s.stop("SIGTERM", 10_000).catch(() => {});
  await cluster?.stop();
}, 120_000);

const ms = (n: number) => `${(n / 1000).toFixed(2)} s`;

async function runCase(name: string, pool: readonly SeededAgent[], kill: (leader: PatroniNode) => void): Promise<void> {
  const c = cluster as PatroniCluster;
  const { leader, standby } = await c.waitForSyncStandby(120_000);
  const load = startLoad(pool);
  const allows = () => load.answers.filter((a) => a.kind === "verify" && a.body.verdict === "ALLOW").length;
  const tight = new Set(pool.filter((x) => cumulativeOf(agents.indexOf(x)) === TIGHT_CUMULATIVE).map((x) => x.agreementId));
  const spentOut = (id: string) =>
    load.answers.some((a) => a.agreementId === id && a.body.verdict === "DENY" && (a.body.reasons as string[]).includes("CUMULATIVE_BUDGET_EXCEEDED"));
  try {
    // Before the kill: ALLOWs flowing, and each tight agent refused for its spent budget.
    await until("ALLOWs under load and the tight budgets spent before the kill", () => allows() >= 100 && [...tight].every(spentOut), 60_000);
    const killedAt = Date.now();
    kill(leader);
    const promoted = await c.waitForLeader({ not: leader, timeoutMs: 90_000 });
    const promotedAt = Date.now();
    expect(promoted.name).toBe(standby.name);
    // Both processes ALLOW again for requests sent after the promotion (bounded).
    await until(
      "ALLOWs from both processes after the promotion",
      () => [0, 1].every((s) => load.answers.some((a) => a.server === s && a.kind === "verify" && a.sentAt > promotedAt && a.body.verdict === "ALLOW")),
      90_000,
    );
    const resumedAll = Date.now();
    await until("a second of load after recovery", () => Date.now() - resumedAll > 1000, 5000);
    await load.stop();

    const answers = load.answers;
    const verifies = answers.filter((a) => a.kind === "verify");
    // Only 200 and 503 (with {error}), never a 500 nor a dropped request.
    for (const a of answers) {
      if (a.status === 200) continue;
      expect(a.status, `${a.kind}: ${JSON.stringify(a.body)}`).toBe(503);
      expect(Object.keys(a.body)).toEqual(["error"]);
    }
    const after = (a: Answer) => a.answeredAt >= killedAt;
    const unavailable = answers.filter((a) => after(a) && a.status === 503);
    const firstAllowBack = verifies.find((a) => a.sentAt > killedAt && a.body.verdict === "ALLOW" && unavailable.some((u) => u.answeredAt <= a.sentAt));
    const verdicts: Record<string, number> = {};
    for (const a of verifies.filter(after)) {
      const k = a.status === 200 ? String(a.body.verdict) + (a.body.verdict === "ALLOW" ? "" : ` ${(a.body.reasons as string[]).join(",")}`) : String(a.status);
      verdicts[k] = (verdicts[k] ?? 0) + 1;
    }
    const window503 = unavailable.length > 0 ? (unavailable.at(-1) as Answer).answeredAt - (unavailable[0] as Answer).answeredAt : 0;
    console.log(
      [
        `failover ${name}: killed ${leader.name}; Patroni promoted ${promoted.name} ${ms(promotedAt - killedAt)} after the kill`,
        `  503 window: ${unavailable.length > 0 ? `${ms(window503)} (first 503 at +${ms((unavailable[0] as Answer).answeredAt - killedAt)}, last at +${ms((unavailable.at(-1) as Answer).answeredAt - killedAt)}; ${unavailable.length} answers 503)` : "none"}`,
        `  ALLOWs resumed ${firstAllowBack ? `${ms(firstAllowBack.answeredAt - killedAt)} after the kill (${ms(firstAllowBack.answeredAt - promotedAt)} after the test saw the promotion)` : "(no ALLOW after a 503)"}; both processes by +${ms(resumedAll - killedAt)}`,
        `  ${answers.length} answers in all; verify answers after the kill: ${JSON.stringify(verdicts)}`,
      ].join("\n"),
    );
    expect(unavailable.length).toBeGreaterThan(0);
    expect(firstAllowBack).toBeDefined();
    // A verdict other than ALLOW is fail-closed: a STEP_UP only while the revocation index was
    // cut off, a DENY only for an agent whose tight budget was spent (and then its burst rule).
    for (const a of verifies.filter((v) => v.status === 200 && v.body.verdict !== "ALLOW")) {
      const reasons = a.body.reasons as string[];
      if (a.body.verdict === "STEP_UP") expect(reasons).toContain("REVOCATION_STATE_STALE");
      else expect(tight.has(a.agreementId as string), `${a.agreementId}: ${reasons.join(",")}`).toBe(true);
    }

    // The new primary's store (a direct connection to it, not through Writ).
    const db = new pg.Pool({ connectionString: c.nodeUrl(promoted), max: 2 });
    try {
      const allowed = verifies.filter((a) => a.body.verdict === "ALLOW").map((a) => a.actionId as string);
      const { rows } = await db.query<{ action_id: string }>("SELECT action_id FROM ledger_entries WHERE outcome = 'allowed' AND action_id = ANY($1::text[])", [
        allowed,
      ]);
      const stored = new Set(rows.map((r) => r.action_id));
      expect(
        allowed.filter((id) => !stored.has(id)),
        "ALLOWed actions missing from the new primary's ledger",
      ).toEqual([]);
      for (const a of agents) {
        const rec = await loadAgreementWithLedger(db, a.agreementId);
        expect(rec, a.agreementId).toBeDefined();
        if (!rec) continue;
        expect(verifyLedger(rec).state, `chain of ${a.agreementId}`).toBe("ok");
        const spent = spentByIntent(rec).get("i1") ?? 0n;
        expect(spent <= BigInt(cumulativeOf(agents.indexOf(a)) * 100), `${a.agreementId} spent ${spent} cents`).toBe(true);
      }
      // The tight agents, asked for more all through the failover, spent exactly their maximum.
      for (const id of tight) {
        const rec = await loadAgreementWithLedger(db, id);
        expect(spentByIntent(rec as NonNullable<typeof rec>).get("i1"), id).toBe(BigInt(TIGHT_CUMULATIVE * 100));
      }

      const latest = await latestTreeHead(db);
      expect(latest).toBeDefined();
      const top = latest as NonNullable<typeof latest>;
      expect(heads.length).toBeGreaterThan(0);
      for (const h of heads) {
        expect(h.tree_size).toBeLessThanOrEqual(top.treeSize);
        const proof = await consistencyProofFor(db, h.tree_size, top.treeSize);
        expect(
          () => verifyConsistency(h.tree_size, top.treeSize, proof.proof.map(hashBytes), hashBytes(h.root), top.root),
          `head of size ${h.tree_size}`,
        ).not.toThrow();
      }
      console.log(
        `  ${allowed.length} ALLOWs, all in ${promoted.name}'s ledger; ${agents.length} chains verify; ${heads.length} signed heads handed out (sizes up to ${Math.max(...heads.map((h) => h.tree_size))}) are consistent with ${promoted.name}'s head of size ${top.treeSize}`,
      );
    } finally {
      await db.end();
    }
  } finally {
    await load.stop();
  }
}

describe("failover of a synchronous Patroni cluster under verify load", () => {
  it("case 1: SIGKILL of the primary's Postgres: every ALLOW survives, ALLOWs resume without a restart", async () => {
    await runCase("case 1 (SIGKILL postgres)", agents.slice(0, 6), (leader) => {
      (cluster as PatroniCluster).killPostgres(leader);
    });
    expect(serves.every((s) => s.child.exitCode === null)).toBe(true);
  }, 400_000);

  it("case 2: SIGKILL of the primary's Patroni and Postgres: the leader key expires, the standby takes over", async () => {
    await runCase("case 2 (SIGKILL patroni + postgres)", agents.slice(6, 12), (leader) => {
      const c = cluster as PatroniCluster;
      c.killPatroni(leader);
      c.killPostgres(leader);
    });
    expect(serves.every((s) => s.child.exitCode === null)).toBe(true);
  }, 400_000);
});
