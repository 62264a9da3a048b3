/**
 * Malformed and random requests (fast-check) on EVERY endpoint of `/openapi.json`, over real
 * HTTP against a server with storage and every optional setting set: random JSON values,
 * objects built from the route's own member names with hostile values, random strings, wrong
 * content types, huge numbers, deep nesting, odd path parameters and query strings, each with
 * no credential, a wrong one, or a valid one (admin, an operator key, the append token).
 * Promise checked: never a 5xx (storage is set, so not even a 503), and every 4xx is a JSON
 * `{error: string}` body and nothing else.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/app.js";
import { loadSettings } from "../../src/api/settings.js";
import { generateSigner } from "../../src/core/jose/index.js";
import { startFrankfurter, type FrankfurterStandIn } from "../helpers/frankfurter.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

interface Operation {
  method: string;
  /** OpenAPI path, `{name}` for parameters. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  hasBody: boolean;
  /** Every property name of the request body schema, at any depth. */
  members: string[];
}

interface OpenApiDoc {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, { schema?: unknown }> } }>>;
}

function memberNames(schema: unknown, out = new Set<string>()): Set<string> {
  if (typeof schema !== "object" || schema === null) return out;
  const s = schema as Record<string, unknown>;
  if (typeof s.properties === "object" && s.properties !== null) {
    for (const [k, v] of Object.entries(s.properties)) {
      out.add(k);
      memberNames(v, out);
    }
  }
  for (const k of ["items", "anyOf", "oneOf", "allOf"]) {
    const v = s[k];
    if (Array.isArray(v)) v.forEach((x) => memberNames(x, out));
    else memberNames(v, out);
  }
  return out;
}

function operationsOf(doc: OpenApiDoc): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = op.parameters ?? [];
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: params.filter((p) => p.in === "query").map((p) => p.name),
        hasBody: op.requestBody !== undefined,
        members: [...memberNames(schema)],
      });
    }
  }
  return ops;
}

// The routes, from the interface description of the app as built (no I/O); a test below checks
// the served /openapi.json describes the same operations.
const OPERATIONS: Operation[] = await (async () => {
  const app = buildApp(loadSettings({ LOG_LEVEL: "silent", BUR_DEV_MAILBOX: "1" }));
  try {
    return operationsOf(JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body) as OpenApiDoc);
  } finally {
    await app.close();
  }
})();

const RUNS = 30;
const appendToken = `append-${randomBytes(12).toString("hex")}`;
let w: RegistryWorld;
let fx: FrankfurterStandIn;
let base: URL;
let operatorKey = "";
let orgId = "";
let agentId = "";
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

beforeAll(async () => {
  fx = await startFrankfurter();
  w = await startRegistryWorld({
    SVC_APPEND_TOKEN: appendToken,
    SVC_PUSH_NOTIFIER_JWK: JSON.stringify(generateSigner().publicJwk),
    SVC_FX_SOURCE_URL: fx.url,
    SVC_FX_TIMEOUT_MS: "1000",
    BUR_DEV_MAILBOX: "1",
    BUR_ALLOW_DEMO_SEED: "1",
    WRIT_ACK_DOMAIN_TIMEOUT_MS: "200",
  });
  base = new URL(w.server.url);
  orgId = await w.createOrg("agent_operator");
  operatorKey = (await w.issueKey(orgId)).token;
  agentId = (await w.registerAgent(operatorKey)).agent_id;
});
afterAll(async () => {
  agent.destroy();
  await w?.close();
  await fx?.close();
});

interface Raw {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

/** Sends exactly this request (the path as given, no normalisation). */
function send(r: Raw): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { ...r.headers };
    if (r.body !== undefined) headers["content-length"] = String(Buffer.byteLength(r.body));
    const req = http.request({ host: base.hostname, port: base.port, method: r.method, path: r.path, headers, agent, timeout: 20_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/** The promise under test, for one answer. */
function check(r: Raw, reply: Reply): void {
  const what = `${r.method} ${r.path} ${JSON.stringify(r.headers)} body ${JSON.stringify(r.body?.slice(0, 300))} -> ${reply.status} ${reply.text.slice(0, 300)}`;
  expect(reply.status, what).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.contentType, what).toMatch(/^application\/json/);
    const body = JSON.parse(reply.text) as unknown;
    expect(body, what).toEqual({ error: expect.any(String) });
  }
}

// ---- arbitraries ----------------------------------------------------------------------------

const RAW_SEGMENT_CHARS = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const ODD_SEGMENTS = [
  "..",
  ".",
  "%",
  "%zz",
  "%00",
  "%2F",
  "%2e%2e",
  "%ff",
  "%C0%AF",
  "a%2Fb",
  "%F0%9F%98%80",
  "%E2%80%AE",
  "1e400",
  "-1",
  "0",
  "00",
  "99999999999999999999999",
  "NaN",
  "Infinity",
  "0x10",
  "null",
  "true",
  "[]",
  "{}",
  `sha256:${"0".repeat(64)}`,
  "%20",
  "+",
  "~",
  "*",
  "x".repeat(300),
];
/** A path parameter: encoded random text, raw printable ASCII, an odd classic, or a real id. */
const pathParam = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: "binary", maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: RAW_SEGMENT_CHARS, minLength: 1, maxLength: 60 }),
  fc.constantFrom(...ODD_SEGMENTS),
  fc.constantFrom("org", "agent").map((k) => (k === "org" ? orgId : agentId)),
);

const hugeNumberText = fc.constantFrom(
  "1e400",
  "-1e400",
  "1e-400",
  "-0",
  "123456789012345678901234567890",
  "0.1e1",
  "9007199254740993",
  "1E308",
  "-9999999999999999999",
);
const jsonText = (v: unknown) => JSON.stringify(v) ?? "null";

/** Raw JSON text of an object with the route's own member names and hostile values. */
function shapedBody(members: string[]): fc.Arbitrary<string> {
  const key = members.length > 0 ? fc.oneof(fc.constantFrom(...members), fc.string({ maxLength: 8 })) : fc.string({ maxLength: 8 });
  const leaf = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }).map(jsonText),
    hugeNumberText,
    fc.string({ unit: "binary", maxLength: 30 }).map(jsonText),
    fc.constantFrom('"\\u0000"', '"\\ud800"', '"2026-02-30T25:61:00Z"', '"USD"', '"sha256:"', `"${"a".repeat(5000)}"`, "[]", "{}"),
  );
  const inner = fc.dictionary(key, leaf, { maxKeys: 6 }).map(
    (d) =>
      `{${Object.entries(d)
        .map(([k, v]) => `${jsonText(k)}:${v}`)
        .join(",")}}`,
  );
  const value = fc.oneof(leaf, inner);
  return fc.dictionary(key, value, { maxKeys: 8 }).map(
    (d) =>
      `{${Object.entries(d)
        .map(([k, v]) => `${jsonText(k)}:${v}`)
        .join(",")}}`,
  );
}

/** Deeply nested JSON text, optionally under one of the route's members. */
function deepBody(members: string[]): fc.Arbitrary<string> {
  return fc
    .record({
      depth: fc.integer({ min: 50, max: 20_000 }),
      open: fc.constantFrom("[", '{"a":', '{"__proto__":', '{"constructor":', '{"body":'),
      under: members.length > 0 ? fc.option(fc.constantFrom(...members)) : fc.constant(null),
    })
    .map(({ depth, open, under }) => {
      const close = open === "[" ? "]" : "}";
      const nested = `${open.repeat(depth)}1${close.repeat(depth)}`;
      return under === null ? nested : `{${jsonText(under)}:${nested}}`;
    });
}

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=latin1",
  "text/plain",
  "application/xml",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/vnd.api+json",
  "application/octet-stream",
  "*/*",
  "json",
];

interface BodyChoice {
  body?: string;
  contentType?: string;
}

function bodyFor(op: Operation): fc.Arbitrary<BodyChoice> {
  const json = (a: fc.Arbitrary<string>) => a.map((body) => ({ body, contentType: "application/json" }));
  return fc.oneof(
    fc.constant({}),
    json(fc.jsonValue({ maxDepth: 4 }).map(jsonText)),
    json(shapedBody(op.members)),
    json(shapedBody(op.members)),
    json(fc.string({ unit: "binary", maxLength: 200 })),
    json(deepBody(op.members)),
    json(hugeNumberText.map((n) => (op.members.length > 0 ? `{${op.members.map((m) => `${jsonText(m)}:${n}`).join(",")}}` : n))),
    fc.record({
      body: fc.oneof(fc.string({ maxLength: 200 }), shapedBody(op.members)),
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
    }),
    fc.constant({ body: "", contentType: "application/json" }),
  );
}

const credential = fc.constantFrom<() => string | undefined>(
  () => undefined,
  () => `Bearer ${w.admin}`,
  () => `Bearer ${operatorKey}`,
  () => `Bearer ${appendToken}`,
  () => "Bearer bur_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  () => "Bearer",
  () => "Basic dXNlcjpwYXNz",
  () => `bearer  ${operatorKey} extra`,
  () => `Bearer ${"x".repeat(2000)}`,
);

const queryString = (op: Operation) =>
  fc.oneof(
    fc.constant(""),
    fc
      .array(
        fc.tuple(
          op.queryParams.length > 0 ? fc.oneof(fc.constantFrom(...op.queryParams), fc.string({ maxLength: 5 })) : fc.string({ maxLength: 5 }),
          fc.oneof(pathParam, hugeNumberText),
        ),
        { maxLength: 4 },
      )
      .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join("&")}`)),
    fc.string({ unit: RAW_SEGMENT_CHARS, maxLength: 40 }).map((s) => `?${s}`),
  );

function requestFor(op: Operation): fc.Arbitrary<Raw> {
  return fc
    .record({
      params: fc.array(pathParam, { minLength: op.pathParams.length, maxLength: op.pathParams.length }),
      query: queryString(op),
      body: op.hasBody ? bodyFor(op) : fc.oneof({ weight: 4, arbitrary: fc.constant<BodyChoice>({}) }, { weight: 1, arbitrary: bodyFor(op) }),
      auth: credential,
      cookie: fc.option(fc.constantFrom("writ_session=x", `writ_session=${"a".repeat(100)}`, "writ_session=%zz; other=1"), { nil: undefined }),
    })
    .map(({ params, query, body, auth, cookie }) => {
      let i = 0;
      const path = op.path.replace(/\{[^}]+\}/g, () => params[i++] || "x") + query;
      const headers: Record<string, string> = {};
      const a = auth();
      if (a !== undefined) headers.authorization = a;
      if (cookie !== undefined) headers.cookie = cookie;
      if (body.contentType !== undefined) headers["content-type"] = body.contentType;
      return { method: op.method, path, headers, ...(body.body !== undefined ? { body: body.body } : {}) };
    });
}

// ---- tests ----------------------------------------------------------------------------------

describe("the served /openapi.json", () => {
  it("describes the operations fuzzed here", async () => {
    const r = await send({ method: "GET", path: "/openapi.json", headers: {} });
    expect(r.status).toBe(200);
    const served = operationsOf(JSON.parse(r.text) as OpenApiDoc).map((o) => `${o.method} ${o.path}`);
    expect(served.sort()).toEqual(OPERATIONS.map((o) => `${o.method} ${o.path}`).sort());
    expect(served).toContain("POST /v1/verify");
    expect(served.length).toBeGreaterThan(20);
  });
});

describe.each(OPERATIONS.map((op) => [`${op.method} ${op.path}`, op] as const))("%s", (_name, op) => {
  it("answers random and malformed requests without a 5xx; every 4xx is {error}", async () => {
    await fc.assert(
      fc.asyncProperty(requestFor(op), async (r) => check(r, await send(r))),
      { numRuns: RUNS },
    );
  });

  it("answers the classic hostile bodies with {error}, with and without credentials", async () => {
    const path = op.path.replace(/\{[^}]+\}/g, "x");
    const huge = `{"a":"${"x".repeat(1024 * 1024 + 10)}"}`;
    const bodies: BodyChoice[] = [
      { body: "{", contentType: "application/json" },
      { body: "null", contentType: "application/json" },
      { body: "[]", contentType: "application/json" },
      { body: '{"__proto__":{"polluted":1}}', contentType: "application/json" },
      { body: '{"constructor":{"prototype":{"polluted":1}}}', contentType: "application/json" },
      { body: `${"[".repeat(200_000)}${"]".repeat(200_000)}`, contentType: "application/json" },
      { body: huge, contentType: "application/json" },
      { body: "<x/>", contentType: "application/xml" },
    ];
    for (const auth of [undefined, `Bearer ${w.admin}`, `Bearer ${operatorKey}`]) {
      for (const b of bodies) {
        const headers: Record<string, string> = { "content-type": b.contentType ?? "application/json" };
        if (auth) headers.authorization = auth;
        const r: Raw = { method: op.method, path, headers, ...(b.body !== undefined ? { body: b.body } : {}) };
        check(r, await send(r));
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses numbers a query or path cannot mean (Infinity, 1e400, NaN) with {error}", async () => {
    const odd = ["1e400", "-1e400", "Infinity", "-Infinity", "NaN", "1e20", "-0", "0x1f"];
    const auth = { authorization: `Bearer ${w.admin}` };
    for (const v of odd) {
      const path = op.path.replace(/\{[^}]+\}/g, v);
      for (const q of [
        "",
        ...op.queryParams.map((p) => `?${p}=${v}`),
        op.queryParams.length > 1 ? `?${op.queryParams.map((p) => `${p}=${v}`).join("&")}` : "",
      ]) {
        const r: Raw = { method: op.method, path: `${path}${q}`, headers: auth };
        check(r, await send(r));
      }
    }
  });
});
