/**
 * Postgres stopped (a fast shutdown) in the middle of a verify load against `writ serve` (a
 * child process), on a SEPARATE embedded Postgres that this test starts, stops and starts
 * again (temp folder, free port). While it is down: verify answers 503 `{error}` (or, once the
 * revocation index has been cut off longer than its bound, the fail-closed STEP_UP
 * REVOCATION_STATE_STALE), never a 500 and never an ALLOW; `/readyz` is 503. After Postgres is
 * back, the same server process ALLOWs again by itself. Every ALLOW answered is in the ledger
 * and the chain verifies. Outcomes are in flight too (a payment provider posts `authorized` or
 * `failed` after ALLOWs): each answers 200 or 503, never 500; every one answered 200 is in the
 * ledger once, and the spent totals are exactly the ledger's.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSignedAgreement, spentByIntent, verifyLedger } from "../../src/core/agreement/index.js";
import type { Delegation } from "../../src/core/delegation/index.js";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres, type RunningPostgres } from "../../src/dev/postgres.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import { generateSigner } from "../../src/core/jose/index.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { migrate } from "../../src/store/migrate.js";
import { createPool, withTransaction } from "../../src/store/pool.js";
import { PRINCIPAL, principalKey } from "../fixtures/records.js";
import { freshPublicKey } from "../helpers/registry-client.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { acknowledgedBy, action, HOUR, iso, mandate } from "../helpers/verify-world.js";

const PG_SETTINGS = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };
const IN_FLIGHT = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dataDir: string;
let port: number;
let password: string;
let pg: RunningPostgres | undefined;
let pool: Pool | undefined;
let server: ServeProcess | undefined;
const admin = `admin-${randomBytes(12).toString("hex")}`;
let operatorKey = "";
let pspKey = "";
let agentId = "";
let agreementId = "";

function startPg(): Promise<RunningPostgres> {
  return startPostgres({ dataDir, port, password, serverSettings: PG_SETTINGS });
}

async function call(method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(`${server?.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  }).catch((e: unknown) => {
    throw new Error(`${method} ${path} failed (${String(e)}); writ serve wrote:\n${server?.output().slice(-8000) ?? ""}`);
  });
  const text = await r.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { unparsed: text };
  }
  return { status: r.status, body: parsed };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "writ-test-pgstop-"));
  port = await freePort();
  password = newPassword();
  pg = await startPg();
  const url = pg.url("postgres");
  await migrate(url);
  pool = createPool(url, { max: 2 });
  server = await startServeProcess({
    env: { DATABASE_URL: url, BUR_ADMIN_TOKEN: admin, SVC_LOG_SIGNING_SEED: randomBytes(32).toString("hex"), BUR_WEBHOOK_WORKER: "0", LOG_LEVEL: "warn" },
  });
  for (let i = 0; (await call("GET", "/readyz", null)).status !== 200; i++) {
    if (i > 200) throw new Error("writ serve did not become ready");
    await sleep(100);
  }
  const org = await call("POST", "/v1/orgs", admin, { name: "pg stop operator", org_type: "agent_operator" });
  const key = await call("POST", `/v1/orgs/${String(org.body.org_id)}/keys`, admin, { name: "verify" });
  expect([org.status, key.status]).toEqual([201, 201]);
  operatorKey = String(key.body.token);
  agentId = `agent-pgstop-${randomBytes(4).toString("hex")}`;
  const agent = await call("POST", "/v1/agents", operatorKey, {
    agent_id: agentId,
    principal_id: "prn_pgstop",
    verification_level: "operator_verified",
    public_key: freshPublicKey(),
  });
  expect(agent.status).toBe(201);
  // A payment provider the agreement names as a party, to post outcomes.
  const psp = await call("POST", "/v1/orgs", admin, { name: "pg stop psp", org_type: "processor_psp" });
  const pspKeyAnswer = await call("POST", `/v1/orgs/${String(psp.body.org_id)}/keys`, admin, { name: "outcomes" });
  pspKey = String(pspKeyAnswer.body.token);
  agreementId = `agr-${randomBytes(4).toString("hex")}`;
  const at = Date.now() - HOUR;
  const signed = await buildSignedAgreement(
    { agreement_id: agreementId, mandates: [mandate(agentId, "i1", { cumulative_maximum: 1_000_000 })], at: iso(at) },
    principalKey,
  );
  const pspSigner = generateSigner();
  expect((await call("POST", `/v1/orgs/${String(psp.body.org_id)}/ack-keys`, admin, { public_key: pspSigner.publicJwk })).status).toBe(201);
  const agreement = await acknowledgedBy(signed, [{ orgId: String(psp.body.org_id), key: pspKey, signer: pspSigner, role: "psp" }], iso(at));
  const delegation: Delegation = {
    delegation_id: `del-${randomBytes(4).toString("hex")}`,
    principal: { ...PRINCIPAL, public_key: principalKey.publicJwk },
    agent: { agent_id: agentId },
    granted_at: iso(at),
    expires_at: iso(Date.now() + 24 * HOUR),
    purpose: "test purchases",
    scope: { currency: "USD" },
    conditions: [],
    revocable: true,
    delegation_chain: [],
    status: "active",
    intent_agreement: agreement,
  };
  await withTransaction(pool, (c) => upsertDelegation(c, delegation, { orgId: String(org.body.org_id) }));
}, 120_000);

afterAll(async () => {
  if (server && server.child.exitCode !== null) console.error(`writ serve exited early:\n${server.output().slice(-6000)}`);
  await server?.stop("SIGTERM", 5000).catch(() => {});
  await pool?.end().catch(() => {});
  await pg?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Answer {
  sentAt: number;
  answeredAt: number;
  status: number;
  body: Record<string, unknown>;
  actionId: string;
}

describe("Postgres stopped during a verify load", () => {
  it("answers 503 (or the fail-closed STEP_UP), never 500 or ALLOW, and recovers by itself", async () => {
    const verify = async (): Promise<Answer> => {
      const act = action({ amount: 1 });
      const sentAt = Date.now();
      const r = await call("POST", "/v1/verify", operatorKey, { agent_id: agentId, action: act });
      return { sentAt, answeredAt: Date.now(), ...r, actionId: String(act.action_id) };
    };
    // The server is ready and its revocation index loaded (bounded wait).
    await expect.poll(async () => (await verify()).body.verdict, { timeout: 20_000, interval: 100 }).toBe("ALLOW");

    const answers: Answer[] = [];
    const outcomes: { actionId: string; outcome: string; status: number; body: Record<string, unknown> }[] = [];
    let stop = false;
    const deadline = Date.now() + 60_000;
    const load = Promise.all(
      Array.from({ length: IN_FLIGHT }, async (_, worker) => {
        while (!stop && Date.now() < deadline) {
          const a = await verify();
          answers.push(a);
          // One worker of two posts an outcome for its ALLOW: every third `failed`.
          if (a.body.verdict === "ALLOW" && worker % 2 === 0) {
            const outcome = outcomes.length % 3 === 0 ? "failed" : "authorized";
            const r = await call("POST", "/v1/verify/outcomes", pspKey, { agreement_id: agreementId, action_id: a.actionId, outcome });
            outcomes.push({ actionId: a.actionId, outcome, ...r });
          }
          await sleep(5);
        }
      }),
    );

    await sleep(1000);
    const stopping = Date.now();
    await pg?.stop();
    const stopped = Date.now();
    // Down for 7 s: longer than the revocation index's 5 s bound.
    const ready: number[] = [];
    while (Date.now() - stopped < 7000) {
      ready.push((await call("GET", "/readyz", null)).status);
      await sleep(500);
    }
    const restarting = Date.now();
    pg = await startPg();
    // Recovery: an ALLOW for a request sent after the restart, bounded.
    let recoveredAt: number | undefined;
    while (Date.now() < deadline && recoveredAt === undefined) {
      recoveredAt = answers.find((a) => a.sentAt > restarting && a.status === 200 && a.body.verdict === "ALLOW")?.sentAt;
      await sleep(100);
    }
    await sleep(500);
    stop = true;
    await load;

    expect(recoveredAt, "verify did not ALLOW again after Postgres came back").toBeDefined();
    expect(server?.child.exitCode).toBeNull(); // the same process recovered
    expect(ready.every((s) => s === 503)).toBe(true);
    expect((await call("GET", "/readyz", null)).status).toBe(200);

    // Never a 5xx other than 503; every error is {error: string}.
    for (const a of answers) {
      if (a.status === 200) continue;
      expect(a.status, JSON.stringify(a.body)).toBe(503);
      expect(Object.keys(a.body)).toEqual(["error"]);
      expect(typeof a.body.error).toBe("string");
    }
    // While Postgres was down: no ALLOW; a 200 is only the fail-closed STEP_UP.
    const down = answers.filter((a) => a.sentAt >= stopped && a.sentAt < restarting);
    expect(down.length).toBeGreaterThan(10);
    expect(down.some((a) => a.status === 503)).toBe(true);
    for (const a of down.filter((x) => x.status === 200)) {
      expect(a.body).toMatchObject({ verdict: "STEP_UP", reasons: ["REVOCATION_STATE_STALE"] });
    }
    const beforeStop = answers.filter((a) => a.answeredAt < stopping);
    expect(beforeStop.length).toBeGreaterThan(10);
    for (const a of beforeStop) expect(a.body.verdict, JSON.stringify(a.body)).toBe("ALLOW");

    // There is never an ALLOW without its ledger entry; the chain verifies.
    const a = await loadAgreementWithLedger(pool as Pool, agreementId);
    if (!a) throw new Error("agreement is not stored");
    expect(verifyLedger(a)).toEqual({ state: "ok" });
    const byAction = new Map((a.ledger ?? []).filter((e) => e.outcome === "allowed").map((e) => [e.action_id, e]));
    const allowed = answers.filter((x) => x.body.verdict === "ALLOW");
    expect(allowed.length).toBeGreaterThan(10);
    for (const x of allowed) {
      expect(byAction.get(x.actionId)?.entry_hash).toBe((x.body.ledger_entry as { entry_hash: string }).entry_hash);
    }

    // Outcomes in flight: 200 or a clean 503, never 500; each 200 is in the ledger once; the totals are the ledger's.
    expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(5);
    for (const o of outcomes) {
      if (o.status === 200) {
        expect((a.ledger ?? []).filter((e) => e.action_id === o.actionId && e.outcome === o.outcome)).toHaveLength(1);
        continue;
      }
      expect(o.status, JSON.stringify(o.body)).toBe(503);
      expect(Object.keys(o.body)).toEqual(["error"]);
    }
    const pairs = (a.ledger ?? []).map((e) => `${e.action_id}/${e.outcome}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect((await spendTotals(pool as Pool, agreementId)).get("i1")).toBe(spentByIntent(a).get("i1"));
  }, 90_000);
});
