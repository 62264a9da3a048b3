/**
 * I-JSON over real HTTP (src/api/well-formed-input.ts): a lone surrogate anywhere in a request
 * is a 400 naming the field, on every route, before any statement, so it never reaches a batch
 * shared with other requests (that a row Postgres refuses inside such a batch fails alone:
 * refusal-writer.test.ts and log-batcher.test.ts); paired surrogates (emoji) are accepted and
 * stored.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bodyScanStats } from "../../src/api/body-shape.js";
import { action, startVerifyWorld, uid, type VerifyWorld } from "../helpers/verify-world.js";

const APPEND_TOKEN = randomBytes(16).toString("hex");
let w: VerifyWorld;

beforeAll(async () => {
  w = await startVerifyWorld({ SVC_APPEND_TOKEN: APPEND_TOKEN });
});
afterAll(async () => {
  await w?.close();
});

/** `action()` with `over` merged in (JSON.stringify sends a lone surrogate as "\ud800"). */
const verifyBody = (over: Record<string, unknown>) => ({ agent_id: w.agentId, action: { ...action(), ...over } });

async function storedDecisions(where: { agentId: string } | { actionId: string }): Promise<number> {
  const [column, value] = "agentId" in where ? ["agent_id", where.agentId] : ["action_id", where.actionId];
  const { rows } = await w.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM verify_decisions WHERE ${column} = $1`, [value]);
  return rows[0]?.n ?? 0;
}

describe("POST /v1/verify", () => {
  it("400 naming action.action_id for a lone surrogate in it; nothing is stored", async () => {
    const before = await storedDecisions({ agentId: w.agentId });
    const r = await w.verify(verifyBody({ action_id: "act-\ud800" }));
    expect(r).toMatchObject({ status: 400, body: { error: "action.action_id must not contain a lone surrogate" } });
    expect(Object.keys(r.body)).toEqual(["error"]);
    expect(await storedDecisions({ agentId: w.agentId })).toBe(before);
  });

  it("400 naming the path of a nested member and of an array element, even members the schema ignores", async () => {
    const nested = await w.verify(verifyBody({ details: { ok: "fine", note: "x\udc00" } }));
    expect(nested).toMatchObject({ status: 400, body: { error: "action.details.note must not contain a lone surrogate" } });
    const element = await w.verify({ ...verifyBody({}), extras: ["ok", "\udbff"] });
    expect(element).toMatchObject({ status: 400, body: { error: "extras.1 must not contain a lone surrogate" } });
  });

  it("400 naming the object whose member name holds a lone surrogate", async () => {
    const inAction = await w.verify(verifyBody({ "\ud800k": 1 }));
    expect(inAction).toMatchObject({ status: 400, body: { error: "member names of action must not contain a lone surrogate" } });
    const atTop = await w.verify({ ...verifyBody({}), "k\udfff": true });
    expect(atTop).toMatchObject({ status: 400, body: { error: "member names of the request body must not contain a lone surrogate" } });
  });

  it("accepts paired surrogates (emoji) and stores the decision with them", async () => {
    const actionId = `act-😀-${uid("x")}`;
    const r = await w.verify(verifyBody({ action_id: actionId, merchant: "𝄞 music" }));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ action_id: actionId, verdict: "DENY" }); // the agent has no agreement
    expect(await storedDecisions({ actionId })).toBe(1);
  });
});

describe("path and query values", () => {
  it("a path parameter cannot carry one: its only URL form (%ED%A0%80, not UTF-8) is a 400 before any route runs", async () => {
    const r = await w.call("GET", "/v1/log/entries/by-hash/%ED%A0%80");
    expect(r).toMatchObject({ status: 400, body: { error: "'/v1/log/entries/by-hash/%ED%A0%80' is not a valid url component" } });
    const paired = await w.call("GET", `/v1/agents/%F0%9F%98%80`, w.operatorKey);
    expect(paired).toMatchObject({ status: 404, body: { error: "agent was not found" } }); // a pair decodes, and reaches the route
  });

  it("a query value cannot carry one: %ED%A0%80 stays the literal text, which the route then refuses naming the field", async () => {
    const r = await w.call("GET", "/v1/fx?currency=%ED%A0%80&reference=USD&day=2026-01-01");
    expect(r).toMatchObject({ status: 400, body: { error: "currency must be three upper-case letters (an ISO 4217 code such as EUR)" } });
  });
});

describe("POST /v1/log/entries", () => {
  it('400 naming body.lone for {kind: incident, body: {lone: "\\ud800x"}}; nothing is appended, and a sound entry is', async () => {
    const r = await w.call("POST", "/v1/log/entries", APPEND_TOKEN, { kind: "incident", body: { lone: "\ud800x" } });
    expect(r).toMatchObject({ status: 400, body: { error: "body.lone must not contain a lone surrogate" } });
    const { rows } = await w.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM log_entries WHERE kind = 'incident'");
    expect(rows[0]?.n).toBe(0);
    const ok = await w.call("POST", "/v1/log/entries", APPEND_TOKEN, { kind: "incident", body: { fine: "😀" } });
    expect(ok.status).toBe(200);
    expect(ok.body.entry).toMatchObject({ kind: "incident", body: { fine: "😀" } });
  });
});

/**
 * Bounds before parsing (src/api/body-shape.ts): a body's nesting and size are checked while
 * it streams in, on every route, authenticated or not. The work is counted (bytes the scan
 * looked at, calls of JSON.parse on the body), not timed.
 */
describe("bodies bounded before they are parsed", () => {
  const post = (path: string, body: string, token?: string) =>
    fetch(`${w.server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it("a megabyte of nested arrays is a 400 {error} after a few bytes of scanning, and JSON.parse never sees it", async () => {
    const parse = vi.spyOn(JSON, "parse");
    try {
      const big = nested(512 * 1024 - 1); // just under the 1 MiB limit of the log append route
      const before = { ...bodyScanStats };
      const r = await post("/v1/log/entries", big, APPEND_TOKEN);
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ error: "request body nests arrays and objects deeper than 32 levels" });
      // The scan stopped at the 33rd "[" (the rest streamed past unparsed, unscanned).
      expect(bodyScanStats.refused - before.refused).toBe(1);
      expect(bodyScanStats.bytes - before.bytes).toBeLessThan(70 * 1024); // at most the chunk that held the 33rd "["
      expect(parse.mock.calls.filter(([text]) => typeof text === "string" && text.startsWith("[[[")).length).toBe(0);
    } finally {
      parse.mockRestore();
    }
  });

  it("the same on an authenticated route (verify) and on the unauthenticated demo check; a flat body with too many objects too", async () => {
    const deep = await post("/v1/verify", `{"agent_id":"a","action":${nested(40)}}`, w.operatorKey);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual({ error: "request body nests arrays and objects deeper than 32 levels" });
    const demo = await post("/demo/check", nested(33));
    expect(demo.status).toBe(400);
    expect(await demo.json()).toEqual({ error: "request body nests arrays and objects deeper than 32 levels" });
    const many = await post("/v1/log/entries", `[${Array.from({ length: 1_000 }, () => "{}").join(",")}]`, APPEND_TOKEN);
    expect(many.status).toBe(400);
    expect(await many.json()).toEqual({ error: "request body holds more than 1000 arrays and objects" });
    expect(many.headers.get("connection")).toBe("close"); // the rest of a refused body is never read
  });

  it("routes that take small bodies refuse a large one by its length, before reading it (413)", async () => {
    const before = { ...bodyScanStats };
    const demo = await post("/demo/check", JSON.stringify({ pad: "x".repeat(128 * 1024) }));
    expect(demo.status).toBe(413);
    expect(await demo.json()).toEqual({ error: "request body is too large" });
    const verify = await post("/v1/verify", JSON.stringify({ agent_id: w.agentId, action: action(), pad: "x".repeat(128 * 1024) }), w.operatorKey);
    expect(verify.status).toBe(413);
    expect(bodyScanStats.bytes - before.bytes).toBe(0);
  });

  it("nesting within the bound, strings holding brackets and escaped quotes pass to the route as before", async () => {
    const r = await w.verify({ agent_id: w.agentId, action: { ...action(), merchant: 'a "[[[[" \\" {{{{ shop' }, extras: JSON.parse(nested(28)) });
    expect(r.status).toBe(200);
  });
});
