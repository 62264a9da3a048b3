/** `GET /`: the landing page links what runs here, and every link it shows answers. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../../src/api/app.js";
import { loadSettings } from "../../../src/api/settings.js";
import { LANDING_LINKS } from "../../../src/api/routes/landing/index.js";

let app: FastifyInstance;
beforeAll(async () => {
  app = buildApp(loadSettings({ LOG_LEVEL: "silent" }), { pool: null });
  await app.ready();
});
afterAll(() => app.close());

describe("GET /", () => {
  it("is an HTML page linking the portal, the API docs and health", async () => {
    const r = await app.inject({ url: "/", headers: { accept: "text/html" } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/html/);
    for (const path of ["/portal/", "/docs/openapi", "/healthz", "/metrics"]) expect(r.body).toContain(`href="${path}"`);
  });

  it("answers JSON to a client that asks for it, and none of its links is a 404", async () => {
    const r = await app.inject({ url: "/", headers: { accept: "application/json" } });
    const body = r.json<{ service: string; links: Array<{ path: string }> }>();
    expect(body.service).toBe("writ");
    expect(body.links.map((l) => l.path)).toEqual([...LANDING_LINKS.map((l) => l.path), "/metrics"]);
    for (const { path } of body.links) {
      const linked = await app.inject({ url: path });
      expect([path, linked.statusCode === 404]).toEqual([path, false]);
    }
  });
});
