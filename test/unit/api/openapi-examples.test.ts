/**
 * /openapi.json documents every operation fully (src/api/plugins/openapi*.ts): a security
 * requirement on every protected operation (bearer schemes for the API key, the admin token, the
 * append token and the portal session), a description of every response, an example for every
 * request, path and query parameter and response, taken from the real demo data
 * (src/api/plugins/openapi-examples.json) and VALID against the route's own schema (ajv compiles
 * each route's body, params, querystring and response schemas), and the verify tag first.
 */
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { RouteOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../../src/api/app.js";
import { loadSettings } from "../../../src/api/settings.js";
import { OPERATION_EXAMPLES } from "../../../src/api/plugins/openapi-document.js";
import { OPERATIONS, SECURITY_SCHEMES } from "../../../src/api/plugins/openapi-operations.js";

interface Operation {
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { example?: unknown }> }>;
}
type Doc = { tags: { name: string }[]; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, unknown> } };

const routes: RouteOptions[] = [];
let doc: Doc;
let operations: { key: string; op: Operation }[];

beforeAll(async () => {
  const app = buildApp(loadSettings({ LOG_LEVEL: "silent", BUR_DEV_MAILBOX: "1" }));
  app.addHook("onRoute", (route) => void routes.push(route));
  await app.ready();
  doc = JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body) as Doc;
  await app.close();
  operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, op })));
});
afterAll(() => undefined);

/** The Fastify route of an operation key (`:param` for `{param}`). */
function routeOf(key: string): RouteOptions {
  const [method, path] = key.split(" ") as [string, string];
  const url = path.replace(/\{([^}]+)\}/g, ":$1");
  const r = routes.find((x) => x.url === url && (Array.isArray(x.method) ? x.method.includes(method) : x.method === method));
  if (!r) throw new Error(`no route for ${key}`);
  return r;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
function compile(schema: unknown): ValidateFunction {
  return ajv.compile(schema as object);
}
function problems(validate: ValidateFunction, value: unknown): string {
  return validate(value) ? "" : ajv.errorsText(validate.errors);
}

describe("/openapi.json", () => {
  it("documents every operation in the tables: credentials, success description, examples", () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.map((o) => o.key).filter((k) => OPERATIONS[k] === undefined)).toEqual([]);
    expect(operations.map((o) => o.key).filter((k) => OPERATION_EXAMPLES[k] === undefined)).toEqual([]);
    // No stale entries either.
    const keys = new Set(operations.map((o) => o.key));
    expect(Object.keys(OPERATIONS).filter((k) => !keys.has(k))).toEqual([]);
    expect(Object.keys(OPERATION_EXAMPLES).filter((k) => !keys.has(k))).toEqual([]);
  });

  it("has bearer security schemes, and a requirement on every protected operation", () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["adminToken", "apiKey", "appendToken", "portalSession"]);
    for (const s of Object.values(doc.components.securitySchemes)) expect(s).toMatchObject({ type: "http", scheme: "bearer" });
    for (const { key, op } of operations) {
      const wanted = OPERATIONS[key]?.security ?? [];
      const named = (op.security ?? []).flatMap((r) => Object.keys(r));
      expect(named, key).toEqual([...wanted]);
      for (const n of named) expect(SECURITY_SCHEMES).toHaveProperty(n);
    }
    expect(doc.paths["/v1/verify"]?.post?.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths["/v1/log/entries"]?.post?.security).toEqual([{ appendToken: [] }]);
    expect(doc.paths["/v1/orgs"]?.post?.security).toEqual([{ adminToken: [] }]);
    expect(doc.paths["/v1/portal/agreements"]?.get?.security).toEqual([{ portalSession: [] }]);
    expect(doc.paths["/svc/delegations/{id}"]?.delete?.security).toEqual([{ adminToken: [] }, { apiKey: [] }, {}]);
  });

  it("describes every response (no 'Default Response') and has an example for every request, parameter and response", () => {
    for (const { key, op } of operations) {
      for (const [status, r] of Object.entries(op.responses)) {
        expect(r.description, `${key} ${status}`).not.toBe("Default Response");
        for (const media of Object.values(r.content ?? {})) expect(media.example, `${key} ${status}`).toBeDefined();
      }
      if (op.requestBody) expect(op.requestBody.content["application/json"]?.example, key).toBeDefined();
      for (const p of op.parameters ?? []) if (p.in === "path") expect(p.example, `${key} ${p.name}`).toBeDefined();
    }
  });

  it("every example is valid against its route's own schema (ajv)", () => {
    const failures: string[] = [];
    for (const { key, op } of operations) {
      const schema = routeOf(key).schema as { body?: unknown; params?: unknown; querystring?: unknown; response?: Record<string, unknown> } | undefined;
      const ex = OPERATION_EXAMPLES[key];
      if (!schema || !ex) continue;
      const check = (what: string, s: unknown, value: unknown) => {
        if (s === undefined || value === undefined) return;
        const p = problems(compile(s), value);
        if (p) failures.push(`${key} ${what}: ${p}`);
      };
      check("request", schema.body, ex.request);
      check("params", schema.params, ex.params);
      check("query", schema.querystring, ex.query);
      for (const [status, r] of Object.entries(op.responses)) {
        for (const media of Object.values(r.content ?? {})) check(`response ${status}`, schema.response?.[status], media.example);
      }
    }
    expect(failures).toEqual([]);
  });

  it("the examples are the demo's: verify answers ALLOW with no reasons for agent_demo, with the demo agreement", () => {
    const verify = doc.paths["/v1/verify"]?.post;
    expect(verify?.requestBody?.content["application/json"]?.example).toMatchObject({
      agent_id: "agent_demo",
      action: { currency: "USD", merchant: "Corner Market" },
    });
    expect(verify?.responses["200"]?.content?.["application/json"]?.example).toMatchObject({
      verdict: "ALLOW",
      svc_decision: "ALLOW",
      reasons: [],
      agreement_id: "agr_demo",
    });
  });

  it("the verify example's proposed_at is the time the document is served (within verify's skew, so Try it out answers ALLOW any day)", () => {
    const example = doc.paths["/v1/verify"]?.post?.requestBody?.content["application/json"]?.example as { action: { proposed_at: string } };
    expect(Math.abs(Date.parse(example.action.proposed_at) - Date.now())).toBeLessThan(60_000);
  });

  it("shows verify first: the first tag and the first path", () => {
    expect(doc.tags[0]?.name).toBe("verify");
    expect(Object.keys(doc.paths)[0]).toBe("/v1/verify");
  });
});
