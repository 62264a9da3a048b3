/**
 * `writ serve` (a child process) killed with SIGKILL in the middle of a verify load: 300
 * requests, 16 in flight, over 12 agents with ample budgets, so ALLOWs are group-committed
 * (several spends share a transaction: the kill lands while batches are in flight, and the
 * test checks that spends did share transactions). Afterwards every ALLOW a client
 * received is in its agreement's ledger (by action_id, with the answered entry hash), no
 * action is recorded twice, every ledger chain verifies, and a restarted server serves again:
 * an ALLOWed action_id retried answers the same ALLOW without a second entry, and an action
 * whose request was cut off by the kill is recorded at most once when retried. Outcomes are in
 * flight too (a payment provider posts `authorized` or `failed` for allowed actions while the
 * load runs): every outcome answered is in the ledger, none twice, and the spent totals are
 * exactly what the ledger says (the core's rule), so a release is never lost nor applied twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spentByIntent, verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

const AGENTS = 12;
const REQUESTS = 300;
const IN_FLIGHT = 16;
/** The kill comes once this many answers arrived. */
const KILL_AFTER = 110;

interface Sent {
  agentId: string;
  agreementId: string;
  body: { agent_id: string; action: Record<string, unknown> };
  status?: number;
  answer?: Record<string, unknown>;
  /** The request failed without an answer (the kill). */
  cut?: boolean;
}

let w: VerifyWorld;
const agreements: { agentId: string; agreementId: string }[] = [];
const children: ServeProcess[] = [];

beforeAll(async () => {
  w = await startVerifyWorld();
  for (let i = 0; i < AGENTS; i++) {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 100, cumulative_maximum: 1_000_000 })] });
    agreements.push({ agentId: agent_id, agreementId });
  }
});
afterAll(async () => {
  for (const c of children) await c.stop("SIGKILL", 5000).catch(() => {});
  await w?.close();
});

function serve(): Promise<ServeProcess> {
  return startServeProcess({
    env: { DATABASE_URL: w.db.url, BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0", LOG_LEVEL: "warn" },
  }).then((p) => (children.push(p), p));
}

async function post(url: string, body: unknown, path = "/v1/verify", token = w.operatorKey): Promise<{ status: number; answer: Record<string, unknown> }> {
  const r = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, answer: (await r.json()) as Record<string, unknown> };
}

/**
 * Waits (bounded) until the server has migrated (503 until then) and its revocation index has
 * loaded (STEP_UP REVOCATION_STATE_STALE until then): a verify answers ALLOW.
 */
async function untilAllowing(url: string, agentId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await post(url, { agent_id: agentId, action: action({ amount: 1 }) });
    if (r.status === 200 && r.answer.verdict === "ALLOW") return r.answer;
    const waiting = r.status === 503 || (r.status === 200 && (r.answer.reasons as string[]).includes("REVOCATION_STATE_STALE"));
    if (!waiting || Date.now() > deadline) throw new Error(`server does not allow: ${r.status} ${JSON.stringify(r.answer)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function ledgers() {
  const out = new Map<string, NonNullable<Awaited<ReturnType<typeof loadAgreementWithLedger>>>>();
  for (const { agreementId } of agreements) {
    const a = await loadAgreementWithLedger(w.db.pool, agreementId);
    if (!a) throw new Error(`agreement ${agreementId} is not stored`);
    out.set(agreementId, a);
  }
  return out;
}

/** The intents whose stored total differs from what the ledger says (the core's rule): none, when every release was applied once. */
async function totalsMatchLedger(id: string, a: Parameters<typeof spentByIntent>[0]): Promise<string[]> {
  const stored = await spendTotals(w.db.pool, id);
  return [...spentByIntent(a)]
    .filter(([intent, spent]) => (stored.get(intent) ?? 0n) !== spent)
    .map(([intent, spent]) => `${intent}: stored ${stored.get(intent) ?? 0n}, ledger ${spent}`);
}

describe("SIGKILL of writ serve during a verify load", () => {
  it("loses no ALLOW, keeps every chain valid, and serves the same answers after a restart", async () => {
    const first = await serve();
    const warm = agreements[0] as { agentId: string; agreementId: string };
    await untilAllowing(first.url, warm.agentId);

    const sent: Sent[] = Array.from({ length: REQUESTS }, (_, i) => {
      const a = agreements[i % AGENTS] as { agentId: string; agreementId: string };
      return { ...a, body: { agent_id: a.agentId, action: action({ amount: 1 + (i % 7) }) } };
    });
    let next = 0;
    let answered = 0;
    let killed = false;
    // Outcomes in flight: every third ALLOW answered gets `failed`, the others `authorized`.
    const outcomes: { agreementId: string; actionId: string; outcome: string; status?: number; cut?: boolean }[] = [];
    const outcomeCalls: Promise<void>[] = [];
    const postOutcome = (s: Sent) => {
      const o = {
        agreementId: s.agreementId,
        actionId: s.body.action.action_id as string,
        outcome: outcomes.length % 3 === 0 ? "failed" : "authorized",
      } as (typeof outcomes)[number];
      outcomes.push(o);
      outcomeCalls.push(
        post(first.url, { agreement_id: o.agreementId, action_id: o.actionId, outcome: o.outcome }, "/v1/verify/outcomes", w.psp.key).then(
          (r) => void (o.status = r.status),
          () => void (o.cut = true),
        ),
      );
    };
    const worker = async () => {
      while (next < sent.length) {
        const s = sent[next++] as Sent;
        try {
          const r = await post(first.url, s.body);
          s.status = r.status;
          s.answer = r.answer;
          answered++;
          if (!killed && r.answer.verdict === "ALLOW") postOutcome(s);
          if (answered >= KILL_AFTER && !killed) {
            killed = true;
            process.kill(first.pid, "SIGKILL");
          }
        } catch {
          s.cut = true;
          if (killed) return; // the server is gone: stop this worker
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    await Promise.all(outcomeCalls);
    expect(killed).toBe(true);
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

    const got = sent.filter((s) => s.status !== undefined);
    const cut = sent.filter((s) => s.cut);
    expect(got.length).toBeGreaterThanOrEqual(KILL_AFTER);
    // Every answer before the kill was a 200 ALLOW with its entry (the budgets are ample).
    for (const s of got) {
      expect(s.status, JSON.stringify(s.answer)).toBe(200);
      expect(s.answer).toMatchObject({ verdict: "ALLOW", agent_id: s.agentId, agreement_id: s.agreementId, action_id: s.body.action.action_id });
    }
    expect(cut.length).toBeGreaterThan(0);

    // Every ALLOW a client received is in the ledger with the entry it was told; no action twice; chains verify.
    const before = await ledgers();
    for (const s of got) {
      const entry = s.answer?.ledger_entry as { sequence: number; entry_hash: string };
      const rec = before.get(s.agreementId)?.ledger?.filter((e) => e.action_id === s.body.action.action_id && e.outcome === "allowed") ?? [];
      expect(rec).toHaveLength(1);
      expect(rec[0]).toMatchObject({ outcome: "allowed", sequence: entry.sequence, entry_hash: entry.entry_hash });
    }
    // ALLOWs were group-committed: some transaction wrote several entries.
    const { rows: shared } = await w.db.pool.query<{ n: number }>(
      "SELECT max(n)::int AS n FROM (SELECT count(*) AS n FROM ledger_entries WHERE agreement_id = ANY($1::text[]) AND outcome = 'allowed' GROUP BY xmin::text) t",
      [agreements.map((a) => a.agreementId)],
    );
    expect(shared[0]?.n).toBeGreaterThan(1);
    for (const [id, a] of before) {
      expect(verifyLedger(a), id).toEqual({ state: "ok" });
      const allowed = (a.ledger ?? []).filter((e) => e.outcome === "allowed").map((e) => e.action_id);
      expect(new Set(allowed).size, id).toBe(allowed.length);
      const pairs = (a.ledger ?? []).map((e) => `${e.action_id}/${e.outcome}`);
      expect(new Set(pairs).size, id).toBe(pairs.length);
      // The totals are exactly the ledger's: no release lost, none applied twice.
      expect(await totalsMatchLedger(id, a), id).toEqual([]);
    }
    // Every outcome answered before the kill is in the ledger; some were cut off by it.
    const answeredOutcomes = outcomes.filter((o) => o.status !== undefined);
    expect(answeredOutcomes.length).toBeGreaterThan(10);
    for (const o of answeredOutcomes) {
      expect(o.status).toBe(200);
      expect(before.get(o.agreementId)?.ledger?.filter((e) => e.action_id === o.actionId && e.outcome === o.outcome)).toHaveLength(1);
    }
    const failed = new Set(answeredOutcomes.filter((o) => o.outcome === "failed").map((o) => o.actionId));

    // A restarted server serves again.
    const second = await serve();
    await untilAllowing(second.url, warm.agentId);

    // An action ALLOWed before the kill, retried: the same answer, no second entry.
    const retried = got.slice(0, 20);
    for (const s of retried) {
      const r = await post(second.url, s.body);
      if (failed.has(s.body.action.action_id as string)) {
        // Released by its failed outcome: never the old ALLOW.
        expect(r.status).toBe(409);
        continue;
      }
      expect(r.status).toBe(200);
      expect(r.answer).toEqual(s.answer);
    }
    // Actions cut off by the kill, retried: each answers (ALLOW, stored or new) and is recorded once.
    for (const s of cut.slice(0, 30)) {
      const r = await post(second.url, s.body);
      expect(r.status, JSON.stringify(r.answer)).toBe(200);
      expect(r.answer).toMatchObject({ verdict: "ALLOW", action_id: s.body.action.action_id });
      s.answer = r.answer;
    }
    const after = await ledgers();
    for (const s of retried) {
      expect(after.get(s.agreementId)?.ledger?.filter((e) => e.action_id === s.body.action.action_id && e.outcome === "allowed")).toHaveLength(1);
    }
    for (const s of cut.slice(0, 30)) {
      const rec = after.get(s.agreementId)?.ledger?.filter((e) => e.action_id === s.body.action.action_id && e.outcome === "allowed") ?? [];
      expect(rec).toHaveLength(1);
      expect(rec[0]?.entry_hash).toBe((s.answer?.ledger_entry as { entry_hash: string }).entry_hash);
    }
    for (const [id, a] of after) {
      expect(verifyLedger(a), id).toEqual({ state: "ok" });
      const pairs = (a.ledger ?? []).map((e) => `${e.action_id}/${e.outcome}`);
      expect(new Set(pairs).size, id).toBe(pairs.length);
      expect(await totalsMatchLedger(id, a), id).toEqual([]);
    }
    expect(await second.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  }, 90_000);
});
