/**
 * The data plane's in-memory caches (agents' verify snapshots, API key credentials) across
 * two app instances on one database, as two replicas of the data plane: what one changes, or
 * what anyone writes to the tables, reaches the other's caches through the change notices
 * (`writ_changes`), and nothing is served from memory while the LISTEN connection is down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld, exhaustedBudget } from "../helpers/verify-world.js";
import type { Answer } from "../helpers/registry-client.js";

let w: VerifyWorld;
let other: TestServer;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listening(s: TestServer): Promise<void> {
  for (let i = 0; i < 200 && !s.app.changeFeed?.listening; i++) await sleep(20);
  expect(s.app.changeFeed?.listening).toBe(true);
}

/** Calls `call` until `done` holds (at most `ms`); returns the last answer and how long it took. */
async function until(call: () => Promise<Answer>, done: (a: Answer) => boolean, ms = 3000): Promise<{ answer: Answer; ms: number }> {
  const start = performance.now();
  let answer = await call();
  while (!done(answer) && performance.now() - start < ms) {
    await sleep(10);
    answer = await call();
  }
  return { answer, ms: performance.now() - start };
}

async function callOther(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
  const r = await fetch(`${other.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>), headers: r.headers };
}

beforeAll(async () => {
  w = await startVerifyWorld();
  other = await startTestServer({ BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0" }, { pool: w.db.pool });
  await Promise.all([listening(w.server), listening(other)]);
});

afterAll(async () => {
  await other?.close();
  await w?.close();
});

describe("verify snapshots across two data-plane processes", () => {
  it("refuses an agent suspended through the other process, although this one kept its snapshot", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");
    // The snapshot is kept (bounded wait: the agreement's own change notice may arrive after the first verify and drop it once).
    const kept = () => w.server.app.verifyRuntime?.candidates.has(agent_id) ?? false;
    await until(
      () => w.verify({ agent_id, action: action() }),
      () => kept(),
    );
    expect(kept()).toBe(true);

    const patched = await callOther("PATCH", `/v1/agents/${agent_id}`, w.operatorKey, { status: "suspended" });
    expect(patched.status).toBe(200);
    const { answer } = await until(
      () => w.verify({ agent_id, action: action() }),
      (a) => a.body.verdict === "DENY",
    );
    expect(answer.body).toMatchObject({ verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] });
  });

  it("follows a write made by no process of ours (psql): a new agreement is found at once", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    expect((await w.verify({ agent_id, action: action() })).body.reasons).toEqual(["NO_ACTIVE_AGREEMENT"]);
    // Stored through the repository on the test's own pool: no app was told.
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    const { answer } = await until(
      () => w.verify({ agent_id, action: action() }),
      (a) => a.body.verdict === "ALLOW",
    );
    expect(answer.body.verdict).toBe("ALLOW");
  });

  it("a spend of the other process is re-checked under the lock: the budget holds and the reason is the budget's", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { cumulative_maximum: 30 })] });
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW"); // this process: 10 spent
    for (let i = 0; i < 2; i++) {
      const r = await callOther("POST", "/v1/verify", w.operatorKey, { agent_id, action: action() });
      expect(r.body.verdict).toBe("ALLOW"); // the other: 30 spent
    }
    // This process's snapshot still says 10: the engine allows, the spend transaction refuses.
    const late = await w.verify({ agent_id, action: action() });
    expect(late.body).toMatchObject({ verdict: "DENY", reasons: ["CUMULATIVE_BUDGET_EXCEEDED"] });
    const { rows } = await w.db.pool.query<{ n: string }>("SELECT coalesce(sum(spent_minor), 0)::text AS n FROM agreement_spend WHERE agreement_id = $1", [
      agreementId,
    ]);
    expect(rows[0]?.n).toBe("3000");
  });

  it("a payment that failed on the other process frees its amount here too", async () => {
    const { agent_id, agreementId, first } = await exhaustedBudget(w);

    const failed = await callOther("POST", "/v1/verify/outcomes", w.psp.key, { agreement_id: agreementId, action_id: first.action_id, outcome: "failed" });
    expect(failed.status).toBe(200);
    const { answer } = await until(
      () => w.verify({ agent_id, action: action() }),
      (a) => a.body.verdict === "ALLOW",
    );
    expect(answer.body.verdict).toBe("ALLOW");
  });

  it("serves nothing from memory while its LISTEN connection is down: a change missed meanwhile is still seen", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
    expect((await w.verify({ agent_id, action: action() })).body.verdict).toBe("ALLOW");

    const feed = w.server.app.changeFeed;
    const pid = feed?.backendPid;
    expect(pid).toBeTypeOf("number");
    await w.db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
    for (let i = 0; i < 200 && feed?.backendPid === pid && feed?.listening; i++) await sleep(5);
    // The notice of this change goes to nobody of this process (or arrives after a reconnect).
    await w.db.pool.query("UPDATE agents SET status = 'suspended' WHERE agent_id = $1", [agent_id]);
    const r = await w.verify({ agent_id, action: action() });
    expect(r.body).toMatchObject({ verdict: "DENY", reasons: ["AGENT_NOT_ACTIVE"] });
    await listening(w.server);
  });
});

describe("API key credentials across two data-plane processes", () => {
  it("a key revoked on one process is refused there from the next request, and by the other within the notice", async () => {
    const { token, key_id } = await w.issueKey(w.operatorOrg, { scopes: ["registry:read", "agents:write"] });
    const probe = (base: string) => fetch(`${base}/v1/orgs/${w.operatorOrg}/keys`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    // Both processes authenticate the key (and keep its credential).
    expect(await probe(w.server.url)).not.toBe(401);
    expect(await probe(other.url)).not.toBe(401);
    expect(w.server.app.credentials.size).toBeGreaterThan(0);

    const revoked = await callOther("DELETE", `/v1/orgs/${w.operatorOrg}/keys/${key_id}`, w.admin);
    expect(revoked.status).toBe(200);
    expect(await probe(other.url)).toBe(401);
    const start = performance.now();
    let status = await probe(w.server.url);
    while (status !== 401 && performance.now() - start < 3000) {
      await sleep(5);
      status = await probe(w.server.url);
    }
    expect(status).toBe(401);
  });
});

describe("the snapshot bound (WRIT_CACHE_MAX_AGENTS) and its metrics", () => {
  /** The value of one sample of `/metrics` (0 when absent). */
  async function sample(base: string, name: string): Promise<number> {
    const text = await fetch(`${base}/metrics`).then((r) => r.text());
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : 0;
  }

  it("keeps at most the bound; agents taken in turn beyond it are read every time, and the metrics say so", async () => {
    const bounded = await startTestServer(
      { BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0", WRIT_CACHE_MAX_AGENTS: "1" },
      { pool: w.db.pool },
    );
    try {
      await listening(bounded);
      const agents: string[] = [];
      for (let i = 0; i < 2; i++) {
        const { agent_id } = await w.registerAgent(w.operatorKey);
        await storeAgreement(w, { mandates: [mandate(agent_id, "i1")] });
        agents.push(agent_id);
      }
      const turns = async (base: string) => {
        for (let round = 0; round < 3; round++) {
          for (const agent_id of agents) {
            const r = await fetch(`${base}/v1/verify`, {
              method: "POST",
              headers: { authorization: `Bearer ${w.operatorKey}`, "content-type": "application/json" },
              body: JSON.stringify({ agent_id, action: action() }),
            });
            expect(((await r.json()) as { verdict?: string }).verdict).toBe("ALLOW");
          }
        }
      };
      const hit = 'writ_verify_snapshot_reads_total{result="hit"}';
      const miss = 'writ_verify_snapshot_reads_total{result="miss"}';

      const [h0, m0] = [await sample(bounded.url, hit), await sample(bounded.url, miss)];
      await turns(bounded.url);
      expect(await sample(bounded.url, "writ_verify_cached_agents")).toBe(1);
      expect(await sample(bounded.url, miss)).toBe(m0 + 6); // each turn pushed the other agent out
      expect(await sample(bounded.url, hit)).toBe(h0);

      // The default bound keeps both: after the first read of each, every verify is a hit.
      const [h1, m1] = [await sample(other.url, hit), await sample(other.url, miss)];
      await turns(other.url);
      expect(await sample(other.url, miss)).toBe(m1 + 2);
      expect(await sample(other.url, hit)).toBe(h1 + 4);
      expect(await sample(other.url, "writ_verify_cached_agents")).toBeGreaterThanOrEqual(2);
    } finally {
      await bounded.close();
    }
  });
});
