/**
 * The typed client cannot drift from the server: its types (src/client/schema.ts) are generated
 * again here from a running server's /openapi.json and must equal the committed file (run
 * `npm run gen:client` after changing a route's schema); and the client sends its credential
 * and reads answers through those types.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_SCHEMA_FILE, renderClientSchema } from "../../../hack/client/render.js";
import { createWritClient } from "../../../src/client/index.js";
import { startTestServer, type TestServer } from "../../helpers/server.js";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ BUR_DEV_MAILBOX: "1" });
});
afterAll(async () => {
  await server?.close();
});

describe("the typed client", () => {
  it("src/client/schema.ts is what the running server's /openapi.json generates (npm run gen:client)", async () => {
    const doc: unknown = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(readFileSync(CLIENT_SCHEMA_FILE, "utf8")).toBe(await renderClientSchema(doc));
  });

  it("calls the server: a typed answer, an {error} answer with its status, the bearer sent", async () => {
    const anonymous = createWritClient({ server: `${server.url}/` });
    const keys = await anonymous.GET("/.well-known/svc-keys.json");
    expect(keys.response.status).toBe(200);
    expect(keys.data).toEqual({ keys: [] });
    const seen: string[] = [];
    const keyed = createWritClient({ server: server.url, token: "bur_not_a_key", fetch: (r) => (seen.push(r.headers.get("authorization") ?? ""), fetch(r)) });
    const refused = await keyed.POST("/v1/verify", {
      body: {
        agent_id: "agent_demo",
        action: { action_id: "act_1", action_type: "purchase", amount: 1, currency: "USD", proposed_at: "2026-01-01T00:00:00Z" },
      },
    });
    expect(seen).toEqual(["Bearer bur_not_a_key"]);
    expect(refused.data).toBeUndefined();
    expect(refused.response.status).toBe(401);
    expect(refused.error).toHaveProperty("error");
  });
});
