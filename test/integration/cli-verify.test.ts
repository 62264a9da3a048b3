/**
 * `writ verify` against the real `POST /v1/verify`: an action inside the stored agreement is
 * ALLOWed (exit 0), one above the intent's ceiling is DENYed (exit 1) with its reason; a key
 * without the verify scope is refused (exit 1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyVerb } from "../../src/cli/verbs/verify.js";
import { runVerb } from "../unit/cli/capture.js";
import { mandate, startVerifyWorld, storeAgreement, uid, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let agreementId = "";

beforeAll(async () => {
  w = await startVerifyWorld();
  ({ agreementId } = await storeAgreement(w, { mandates: [mandate(w.agentId, "int_books", { maximum_amount: 100 })] }));
});

afterAll(async () => {
  await w?.close();
});

const now = () => new Date();

describe("writ verify against the real server", () => {
  it("ALLOW exits 0 and names the agreement", async () => {
    const r = await runVerb(verifyVerb, ["--server", w.server.url, "--agent", w.agentId, "--amount", "12.50", "--currency", "USD", "--action-id", uid("act")], {
      env: { WRIT_API_KEY: w.operatorKey },
      now,
    });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("ALLOW  (svc_decision ALLOW)");
    expect(r.out).toContain(`agreement ${agreementId}`);
  });

  it("DENY exits 1 with the reason; --output json prints the server's answer", async () => {
    const r = await runVerb(verifyVerb, ["--server", w.server.url, "--agent", w.agentId, "--amount", "150", "--currency", "USD", "--output", "json"], {
      env: { WRIT_API_KEY: w.operatorKey },
      now,
    });
    expect(r.code).toBe(1);
    const answer = JSON.parse(r.out) as { verdict: string; svc_decision: string; reasons: string[] };
    expect(answer).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", agent_id: w.agentId });
    expect(answer.reasons).toContain("AMOUNT_ABOVE_INTENT_CEILING");
  });

  it("a key without the verify scope exits 1 with the server's refusal", async () => {
    const wallet = (await w.issueKey(await w.createOrg("wallet"))).token;
    const r = await runVerb(verifyVerb, ["--server", w.server.url, "--agent", w.agentId, "--amount", "1", "--currency", "USD"], {
      env: { WRIT_API_KEY: wallet },
      now,
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/POST \/v1\/verify answered 40[13]/);
  });

  it("the example of `writ verify --help` answers ALLOW against writ dev's demo data, as shown", async () => {
    const dev = await startVerifyWorld({ BUR_ALLOW_DEMO_SEED: "1" });
    try {
      expect((await dev.call("POST", "/v1/admin/seed-demo", dev.admin)).status).toBe(200);
      const example = /example:\n {2}(.+)\n/.exec(verifyVerb.help())?.[1] ?? "";
      // WRIT_API_KEY=<key> writ verify <args>: run the args with that key, against this server.
      const [assignment = "", , , ...rest] = example.match(/'[^']*'|\S+/g) ?? [];
      const args = rest.map((a) => a.replace(/^'(.*)'$/, "$1")).map((a) => (a === "http://127.0.0.1:8080" ? dev.server.url : a));
      const r = await runVerb(verifyVerb, args, { env: { WRIT_API_KEY: assignment.slice("WRIT_API_KEY=".length) }, now });
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toContain("ALLOW  (svc_decision ALLOW)");
    } finally {
      await dev.close();
    }
  });
});
