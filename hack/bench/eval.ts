/**
 * `npm run bench:eval`: evaluations per second and p50/p99 latency of the pure engine on a
 * realistic input (3 signed mandates, a 200-entry ledger, 3 conditions, a 3-link chain),
 * beside a baseline measured in the same run (one canonical-JSON SHA-256 of the action,
 * the cheapest thing a signed-record service does per request), and the one-off cost of
 * preparing the records (signature checks and hash chains; cached per record revision).
 * Goal: p50 <= 5 us (AWS Cedar publishes a 4-11 us median for comparable requests).
 */
import { prepareAgreement } from "../../src/core/agreement/index.js";
import { hashOf } from "../../src/core/canonical/index.js";
import { prepareDelegation } from "../../src/core/delegation/index.js";
import { evaluate, type Action } from "../../src/core/evaluate/index.js";
import * as F from "../../test/fixtures/records.js";
import { quantile, row, timeCalls } from "./stats.js";

const N = Number(process.env.BENCH_N ?? 200_000);
const agreement = await F.agreement({ ledgerEntries: 200 });
const delegation = F.delegation(agreement);
const pa = await prepareAgreement(agreement, { now: F.T0 });
const pd = prepareDelegation(delegation);
const ctx = F.context();
// Vary the action so nothing is constant-folded: amounts, merchants and intents rotate.
const actions: Action[] = Array.from({ length: 64 }, (_, i) =>
  F.action({ action_id: `a-${i}`, amount: 10 + (i % 50), merchant: i % 2 ? "m-fresh" : "m-green", ...(i % 3 === 0 ? { intent_id: "groceries" } : {}) }),
);

const first = evaluate(pd, pa, actions[0] as Action, ctx);
if (first.verdict !== "ALLOW") throw new Error(`benchmark input must be an ALLOW, got ${JSON.stringify(first.reasons)}`);

// Warm up both paths.
timeCalls(50_000, (i) => evaluate(pd, pa, actions[i & 63] as Action, ctx));
timeCalls(50_000, (i) => hashOf(actions[i & 63]));

const base = timeCalls(N, (i) => hashOf(actions[i & 63]));
const ev = timeCalls(N, (i) => evaluate(pd, pa, actions[i & 63] as Action, ctx));
const prep = timeCalls(200, () => void prepareDelegation(delegation));
const prepA: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = process.hrtime.bigint();
  await prepareAgreement(agreement, { now: F.T0 });
  prepA.push(Number(process.hrtime.bigint() - t));
}
prepA.sort((a, b) => a - b);

const us = (ns: number) => ns / 1000;
console.log(`bench:eval  node ${process.version}  ${N} calls each  (3 mandates, 200-entry ledger, 3 conditions, 3-link chain)`);
row("baseline: hashOf(action)", { "ops/s": Math.round(N / base.seconds), p50_us: us(quantile(base.ns, 0.5)), p99_us: us(quantile(base.ns, 0.99)) });
row("evaluate (prepared records)", { "ops/s": Math.round(N / ev.seconds), p50_us: us(quantile(ev.ns, 0.5)), p99_us: us(quantile(ev.ns, 0.99)) });
row("ratio evaluate/baseline", { p50: quantile(ev.ns, 0.5) / quantile(base.ns, 0.5), p99: quantile(ev.ns, 0.99) / quantile(base.ns, 0.99) });
row("prepareDelegation (once/revision)", { p50_us: us(quantile(prep.ns, 0.5)) });
row("prepareAgreement (once/revision)", { p50_us: us(quantile(prepA, 0.5)), note: "3 signatures + 200-entry chain" });
const p50 = us(quantile(ev.ns, 0.5));
console.log(`goal p50 <= 5 us: ${p50 <= 5 ? "met" : "NOT met"} (${p50.toFixed(2)} us)`);
