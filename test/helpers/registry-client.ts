/**
 * Shared set-up of the registry integration tests (registry-*.test.ts): a server with the
 * registry settings on a fresh database, and small HTTP helpers to create organizations, keys
 * and agents through the real API.
 */
import { randomBytes } from "node:crypto";
import { generateSigner } from "../../src/core/jose/index.js";
import type { OrgType, Scope } from "../../src/core/registry/index.js";
import type { AppDeps } from "../../src/api/app.js";
import { createTestDatabase, type TestDatabase } from "./pg.js";
import { startTestServer, type TestServer } from "./server.js";

/** An HTTP answer: status and parsed JSON body. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One registry test world: database, server, admin token. */
export interface RegistryWorld {
  db: TestDatabase;
  server: TestServer;
  admin: string;
  seed: string;
  call(method: string, path: string, token?: string | null, body?: unknown): Promise<Answer>;
  createOrg(orgType: OrgType, name?: string): Promise<string>;
  issueKey(orgId: string, opts?: { scopes?: Scope[]; token?: string; name?: string }): Promise<{ key_id: string; token: string; scopes: Scope[] }>;
  registerAgent(operatorToken: string, over?: Record<string, unknown>): Promise<{ agent_id: string; fingerprint: string; answer: Answer }>;
  close(): Promise<void>;
}

/** A fresh Ed25519 public JWK. */
export function freshPublicKey(): Record<string, string> {
  return { ...generateSigner().publicJwk } as Record<string, string>;
}

/** A random `sha256:` hash string. */
export function randomHash(): string {
  return `sha256:${randomBytes(32).toString("hex")}`;
}

/** Starts a registry world with `env` added to the defaults (and `deps`, e.g. a clock). */
export async function startRegistryWorld(env: Record<string, string> = {}, deps: Omit<AppDeps, "pool"> = {}): Promise<RegistryWorld> {
  const db = await createTestDatabase();
  const admin = `admin-${randomBytes(16).toString("hex")}`;
  const seed = randomBytes(32).toString("hex");
  const server = await startTestServer({ BUR_ADMIN_TOKEN: admin, SVC_LOG_SIGNING_SEED: seed, BUR_WEBHOOK_WORKER: "0", ...env }, { ...deps, pool: db.pool });
  let agentCounter = 0;

  async function call(method: string, path: string, token?: string | null, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>), headers: r.headers };
  }

  const world: RegistryWorld = {
    db,
    server,
    admin,
    seed,
    call,
    async createOrg(orgType, name = `org ${orgType}`) {
      const r = await call("POST", "/v1/orgs", admin, { name, org_type: orgType });
      if (r.status !== 201) throw new Error(`createOrg: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.org_id as string;
    },
    async issueKey(orgId, opts = {}) {
      const body: Record<string, unknown> = { name: opts.name ?? "test key" };
      if (opts.scopes) body.scopes = opts.scopes;
      const r = await call("POST", `/v1/orgs/${orgId}/keys`, opts.token ?? admin, body);
      if (r.status !== 201) throw new Error(`issueKey: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as unknown as { key_id: string; token: string; scopes: Scope[] };
    },
    async registerAgent(operatorToken, over = {}) {
      agentCounter += 1;
      const body = {
        agent_id: `agent-${agentCounter}-${randomBytes(4).toString("hex")}`,
        principal_id: `prn_${randomBytes(6).toString("hex")}`,
        verification_level: "operator_verified",
        public_key: freshPublicKey(),
        ...over,
      };
      const answer = await call("POST", "/v1/agents", operatorToken, body);
      if (answer.status !== 201) throw new Error(`registerAgent: ${answer.status} ${JSON.stringify(answer.body)}`);
      return { agent_id: body.agent_id as string, fingerprint: answer.body.fingerprint as string, answer };
    },
    async close() {
      await server.close();
      await db.drop();
    },
  };
  return world;
}
