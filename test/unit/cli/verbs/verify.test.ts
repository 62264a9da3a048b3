/**
 * `writ verify` against a local stand-in of `POST /v1/verify` (the route is built elsewhere):
 * the request shape, the API key from WRIT_API_KEY or --api-key-file (never an argument), and
 * the exit statuses (0 ALLOW, 1 DENY/STEP_UP or an error answer, 2 bad usage).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyVerb } from "../../../../src/cli/verbs/verify.js";
import { FIXED_NOW, runVerb } from "../capture.js";
import { tempDir } from "../fixtures.js";
import { startStandIn, type StandIn } from "./stand-in.js";

const KEY = "bur_test_0123456789abcdef";
let s: StandIn;
const env: Record<string, string> = { WRIT_API_KEY: KEY };

beforeAll(async () => {
  s = await startStandIn();
});
afterAll(async () => {
  await s.close();
});

function verify(argv: string[], over: { env: Record<string, string> } = { env }) {
  return runVerb(verifyVerb, ["--server", s.url, ...argv], over);
}

const decision = (verdict: string, svc: string, reasons: string[]) => ({ verdict, svc_decision: svc, reasons, agent_id: "agent_books", agreement_id: "agr_1" });

describe("writ verify", () => {
  it("POSTs {agent_id, action} with the bearer key and exits 0 on ALLOW", async () => {
    s.answer = { status: 200, body: decision("ALLOW", "ALLOW", []) };
    const r = await verify([
      "--agent",
      "agent_books",
      "--amount",
      "12.50",
      "--currency",
      "usd",
      "--merchant",
      "bookshop",
      "--intent",
      "int_books",
      "--action-id",
      "act_1",
    ]);
    expect(r.code).toBe(0);
    const req = s.received.at(-1);
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/verify");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.body).toEqual({
      agent_id: "agent_books",
      action: {
        action_id: "act_1",
        action_type: "purchase",
        amount: 12.5,
        currency: "USD",
        proposed_at: FIXED_NOW.toISOString().replace(".000Z", "Z"),
        merchant: "bookshop",
        intent_id: "int_books",
      },
    });
    expect(r.out).toContain("ALLOW  (svc_decision ALLOW)");
    expect(r.out).toContain("agreement agr_1, action act_1");
    expect(r.out + r.err).not.toContain(KEY);
  });

  it.each([
    ["DENY", "BLOCK", ["AMOUNT_ABOVE_INTENT_CEILING"]],
    ["STEP_UP", "STEP_UP", ["LEDGER_STALE"]],
  ])("exits 1 on %s and prints the reasons", async (verdict, svc, reasons) => {
    s.answer = { status: 200, body: decision(verdict, svc, reasons) };
    const r = await verify(["--agent", "agent_books", "--amount", "1", "--currency", "EUR"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`${verdict}  (svc_decision ${svc})`);
    expect(r.out).toContain(`reasons: ${reasons.join(", ")}`);
    const action = (s.received.at(-1)?.body as { action: Record<string, unknown> }).action;
    expect(action.action_id).toMatch(/^act_[0-9a-f-]{36}$/);
    expect(action).not.toHaveProperty("merchant");
  });

  it("sends agreement_id, risk_score and principal_present when given", async () => {
    s.answer = { status: 200, body: decision("ALLOW", "ALLOW", []) };
    const r = await verify(["--agent", "a", "--amount", "1", "--currency", "EUR", "--agreement", "agr_2", "--risk-score", "12.5", "--principal-present"]);
    expect(r.code).toBe(0);
    expect(s.received.at(-1)?.body).toMatchObject({ agreement_id: "agr_2", risk_score: 12.5, principal_present: true });
    const bad = await verify(["--agent", "a", "--amount", "1", "--currency", "EUR", "--risk-score", "101"]);
    expect(bad.code).toBe(2);
  });

  it("prints the whole answer with --output json", async () => {
    s.answer = { status: 200, body: { ...decision("ALLOW", "ALLOW", []), extra: 1 } };
    const r = await verify(["--agent", "a", "--amount", "1", "--currency", "EUR", "--output", "json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: "ALLOW", extra: 1 });
  });

  it("reads the key from --api-key-file (first line) instead of the environment", async () => {
    const file = join(tempDir(), "api-key");
    writeFileSync(file, "bur_from_file\nignored\n", { mode: 0o600 });
    s.answer = { status: 200, body: decision("ALLOW", "ALLOW", []) };
    const r = await verify(["--agent", "a", "--amount", "1", "--currency", "EUR", "--api-key-file", file], { env: {} });
    expect(r.code).toBe(0);
    expect(s.received.at(-1)?.headers.authorization).toBe("Bearer bur_from_file");
  });

  it("an error answer exits 1 with the server's words and what to check", async () => {
    s.answer = { status: 401, body: { error: "API key is not valid" } };
    const r = await verify(["--agent", "a", "--amount", "1", "--currency", "EUR"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("POST /v1/verify answered 401 API key is not valid (check WRIT_API_KEY");
  });

  it("bad usage exits 2 before any request: no key, a bad amount, a bad currency, a key as an argument", async () => {
    const before = s.received.length;
    let r = await verify(["--agent", "a", "--amount", "1", "--currency", "EUR"], { env: {} });
    expect(r.code).toBe(2);
    expect(r.err).toContain("set WRIT_API_KEY or pass --api-key-file");
    r = await verify(["--agent", "a", "--amount", "12.505", "--currency", "USD"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--amount 12.505");
    r = await verify(["--agent", "a", "--amount", "-3", "--currency", "USD"]);
    expect(r.code).toBe(2);
    // A double cannot carry it (it would be sent as 123456789012345.12): refused, never rounded.
    r = await verify(["--agent", "a", "--amount", "123456789012345.12345678", "--currency", "USD"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--amount 123456789012345.12345678: a JSON number cannot carry it exactly");
    r = await verify(["--agent", "a", "--amount", "3", "--currency", "XTS"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--currency XTS is not a payment currency");
    r = await verify(["--agent", "a", "--amount", "3", "--currency", "EURO"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("is not an ISO 4217 currency code");
    r = await verify(["--agent", "a", "--amount", "3", "--currency", "EUR", "--api-key", KEY]);
    expect(r.code).toBe(2);
    expect(r.err).not.toContain(KEY);
    expect(s.received.length).toBe(before);
  });
});
