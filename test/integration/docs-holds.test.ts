/**
 * docs/how-to/capture-and-refund.md answers as shown: every `json request` block is posted to
 * POST /v1/verify/outcomes in page order against the payment the page describes (an ALLOW of
 * 50.00 USD, act_hold_example under agr_hold_example), and the answer must have the status of
 * the `json response <status>` block after it and contain its members.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/core/agreement/index.js";
import { loadAgreementWithLedger } from "../../src/store/agreements-read.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

const PAGE = fileURLToPath(new URL("../../docs/how-to/capture-and-refund.md", import.meta.url));
let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld();
});
afterAll(async () => {
  await w?.close();
});

/** The page's request/response pairs, in order. */
function exchanges(text: string): { request: unknown; status: number; response: unknown }[] {
  const blocks = [...text.matchAll(/```json (request|response(?: (\d{3}))?)\n([\s\S]*?)```/g)];
  const out: { request: unknown; status: number; response: unknown }[] = [];
  for (let i = 0; i < blocks.length; i += 2) {
    const req = blocks[i] as RegExpMatchArray;
    const res = blocks[i + 1] as RegExpMatchArray;
    expect(req[1]).toBe("request");
    expect(res[1]).toMatch(/^response \d{3}$/);
    out.push({ request: JSON.parse(req[3] as string), status: Number(res[2]), response: JSON.parse(res[3] as string) });
  }
  return out;
}

describe("docs/how-to/capture-and-refund.md", () => {
  it("every request answers as the page shows", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey);
    await storeAgreement(w, { agreementId: "agr_hold_example", mandates: [mandate(agent_id, "i1", { cumulative_maximum: 100 })] });
    expect((await w.verify({ agent_id, action: action({ action_id: "act_hold_example", amount: 50 }) })).body.verdict).toBe("ALLOW");
    const pairs = exchanges(readFileSync(PAGE, "utf8"));
    expect(pairs.length).toBeGreaterThanOrEqual(5);
    for (const p of pairs) {
      const r = await w.outcome(p.request);
      expect({ status: r.status, body: r.body }, JSON.stringify(p.request)).toMatchObject({ status: p.status, body: p.response as object });
    }
    const a = await loadAgreementWithLedger(w.db.pool, "agr_hold_example");
    expect(a && verifyLedger(a)).toEqual({ state: "ok" });
  });
});
