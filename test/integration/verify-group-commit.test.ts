/**
 * ALLOWs group-committed across two `writ serve` processes on one Postgres: 12 agreements
 * whose budgets hold exactly 10 payments each, 360 concurrent verifies (30 per agreement,
 * alternating between the processes), and 60 of them sent twice at once (a client's retry).
 * Exactly 10 ALLOWs per agreement, every other answer a DENY with the budget's reason, a
 * retry answered exactly as its original, every chain verifies with its totals, every ALLOW
 * answered names its own entry, and spends did share transactions (one xmin, several entries).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spentByIntent, verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { spendTotals } from "../../src/store/ledger/index.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { action, mandate, startVerifyWorld, storeAgreement, untilAllowing, type VerifyWorld } from "../helpers/verify-world.js";

const AGREEMENTS = 12;
const PER_AGREEMENT = 30;
const BUDGET_PAYMENTS = 10;

let w: VerifyWorld;
const children: ServeProcess[] = [];
const agreements: { agentId: string; agreementId: string }[] = [];

async function verify(url: string, body: unknown): Promise<{ status: number; answer: Record<string, unknown> }> {
  const r = await fetch(`${url}/v1/verify`, {
    method: "POST",
    headers: { authorization: `Bearer ${w.operatorKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, answer: (await r.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  w = await startVerifyWorld();
  // 20 budget DENYs per agent inside a minute would otherwise trip DENIED_ATTEMPT_BURST (which
  // REVOKEs, depending on how the answers interleave): this test is about the group commit, the
  // burst rule has its own tests.
  const env = {
    DATABASE_URL: w.db.url,
    BUR_ADMIN_TOKEN: w.admin,
    SVC_LOG_SIGNING_SEED: w.seed,
    BUR_WEBHOOK_WORKER: "0",
    LOG_LEVEL: "warn",
    WRIT_DENIED_ATTEMPT_BURST: "0",
  };
  children.push(...(await Promise.all([startServeProcess({ env }), startServeProcess({ env })])));
  const { agent_id: warm } = await w.registerAgent(w.operatorKey);
  await storeAgreement(w, { mandates: [mandate(warm, "warm", { maximum_amount: 100, cumulative_maximum: 1_000_000 })] });
  await Promise.all(children.map((c) => untilAllowing(c.url, warm, w.operatorKey)));
  for (let i = 0; i < AGREEMENTS; i++) {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    const { agreementId } = await storeAgreement(w, { mandates: [mandate(agent_id, "i1", { maximum_amount: 10, cumulative_maximum: 10 * BUDGET_PAYMENTS })] });
    agreements.push({ agentId: agent_id, agreementId });
  }
}, 120_000);

afterAll(async () => {
  for (const c of children) await c.stop("SIGTERM", 10_000).catch(() => {});
  await w?.close();
});

describe("group-committed ALLOWs across two processes", () => {
  it("hold every budget exactly, answer retries alike, and keep every chain valid", async () => {
    const bodies = Array.from({ length: AGREEMENTS * PER_AGREEMENT }, (_, i) => {
      const a = agreements[i % AGREEMENTS] as (typeof agreements)[number];
      return { a, body: { agent_id: a.agentId, action: action({ amount: 10 }) }, url: (children[i % 2] as ServeProcess).url };
    });
    // Every sixth request is also sent again at once, to the other process.
    const sends = bodies.flatMap((b, i) => [b, ...(i % 6 === 0 ? [{ ...b, url: (children[(i + 1) % 2] as ServeProcess).url }] : [])]);
    const answers = await Promise.all(sends.map((s) => verify(s.url, s.body)));

    for (const r of answers) {
      expect(r.status, JSON.stringify(r.answer)).toBe(200);
      if (r.answer.verdict !== "ALLOW") expect(r.answer).toMatchObject({ verdict: "DENY", reasons: ["CUMULATIVE_BUDGET_EXCEEDED"] });
    }
    // A retry sent together with its original gets the same answer, with the same entry.
    const byAction = new Map<string, Record<string, unknown>[]>();
    sends.forEach((s, i) =>
      byAction.set(s.body.action.action_id as string, [
        ...(byAction.get(s.body.action.action_id as string) ?? []),
        (answers[i] as { answer: Record<string, unknown> }).answer,
      ]),
    );
    for (const [id, got] of byAction) if (got.length > 1) expect(got[1], id).toEqual(got[0]);

    for (const { agreementId } of agreements) {
      const a = await loadAgreementWithLedger(w.db.pool, agreementId);
      if (!a) throw new Error(`agreement ${agreementId} is not stored`);
      expect(verifyLedger(a), agreementId).toEqual({ state: "ok" });
      const allowed = (a.ledger ?? []).filter((e) => e.outcome === "allowed");
      expect(allowed, agreementId).toHaveLength(BUDGET_PAYMENTS);
      expect(spentByIntent(a).get("i1"), agreementId).toBe(BigInt(BUDGET_PAYMENTS) * 1000n);
      expect((await spendTotals(w.db.pool, agreementId)).get("i1"), agreementId).toBe(BigInt(BUDGET_PAYMENTS) * 1000n);
      // The ALLOWs answered for this agreement are exactly its entries (a retry names its original's).
      const answered = new Set(
        [...byAction.values()]
          .map((got) => got[0] as Record<string, unknown>)
          .filter((x) => x.verdict === "ALLOW" && x.agreement_id === agreementId)
          .map((x) => (x.ledger_entry as { entry_hash: string }).entry_hash),
      );
      expect([...answered].sort(), agreementId).toEqual(allowed.map((e) => e.entry_hash).sort());
    }
    // Spends shared transactions: some transaction wrote several entries.
    const { rows } = await w.db.pool.query<{ n: number }>(
      "SELECT max(n)::int AS n FROM (SELECT count(*) AS n FROM ledger_entries WHERE agreement_id = ANY($1::text[]) GROUP BY xmin::text) t",
      [agreements.map((a) => a.agreementId)],
    );
    expect(rows[0]?.n).toBeGreaterThan(1);
  }, 120_000);
});
