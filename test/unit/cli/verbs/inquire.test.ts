/** `writ inquire` against a local stand-in: the request, the printed answer, exit statuses. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inquireVerb } from "../../../../src/cli/verbs/inquire.js";
import { runVerb } from "../capture.js";
import { startStandIn, type StandIn } from "./stand-in.js";

let s: StandIn;
beforeAll(async () => {
  s = await startStandIn();
});
afterAll(async () => {
  await s.close();
});

const answer = {
  inquiry_id: "inq_0123456789abcdef01234567",
  purpose_code: "payment_authorization",
  at: "2026-03-01T10:00:00.000Z",
  agent: { agent_id: "agent_books", status: "active", verification_level: "institution_attested" },
  trust_score: { score: 700, cold_start: true, reasons: [{ code: "VERIFICATION_LEVEL", points: 700 }] },
  identity: { fingerprint: "sha256:ab", registered_at: "2026-02-01T00:00:00.000Z", operator_org_id: "org_1" },
  verification: { level: "institution_attested" },
  active_authorizations: 2,
  revocations: 0,
  incidents: 1,
};

describe("writ inquire", () => {
  it("POSTs {agent_id, purpose_code} with the key and prints the answer", async () => {
    s.answer = { status: 200, body: answer };
    const r = await runVerb(inquireVerb, ["--server", s.url, "--agent", "agent_books", "--purpose", "payment_authorization"], {
      env: { WRIT_API_KEY: "bur_k" },
    });
    expect(r.code).toBe(0);
    expect(s.received.at(-1)).toMatchObject({
      method: "POST",
      path: "/v1/inquiries",
      body: { agent_id: "agent_books", purpose_code: "payment_authorization" },
    });
    expect(s.received.at(-1)?.headers.authorization).toBe("Bearer bur_k");
    expect(r.out).toContain("agent agent_books: active, verification institution_attested");
    expect(r.out).toContain("trust score 700 (cold start): VERIFICATION_LEVEL +700");
    expect(r.out).toContain("active authorizations 2, revocations 0, incidents 1");
    const y = await runVerb(inquireVerb, ["--server", s.url, "--agent", "agent_books", "--purpose", "payment_authorization", "--output", "yaml"], {
      env: { WRIT_API_KEY: "bur_k" },
    });
    expect(y.out).toContain("inquiry_id: inq_0123456789abcdef01234567");
  });

  it("exits 1 on an error answer, 2 on an unknown purpose or a missing key", async () => {
    s.answer = { status: 404, body: { error: "agent was not found" } };
    let r = await runVerb(inquireVerb, ["--server", s.url, "--agent", "nobody", "--purpose", "payment_authorization"], { env: { WRIT_API_KEY: "k" } });
    expect(r.code).toBe(1);
    expect(r.err).toContain("answered 404 agent was not found");
    r = await runVerb(inquireVerb, ["--server", s.url, "--agent", "a", "--purpose", "curiosity"], { env: { WRIT_API_KEY: "k" } });
    expect(r.code).toBe(2);
    expect(r.err).toContain("--purpose must be one of payment_authorization");
    r = await runVerb(inquireVerb, ["--server", s.url, "--agent", "a", "--purpose", "payment_authorization"]);
    expect(r.code).toBe(2);
  });
});
