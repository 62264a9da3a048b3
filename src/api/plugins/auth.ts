/**
 * Registry credentials: `Authorization: Bearer <token>`, where the token is either the admin
 * token (BUR_ADMIN_TOKEN) or an organization API key (`bur_...`).
 *
 * Decorates `app.authenticate(request)` (the credential, or a 401), the hook factories
 * `app.requireAdmin` and `app.requireScope(scope)` (use them as `onRequest` hooks so a refused
 * request is answered before its body is read; they work as `preHandler`s too) and
 * `request.credential` (set by the hooks).
 *
 * Rules (docs/registry.md, "Credentials"):
 * - the admin token is compared in constant time (SHA-256 of both sides, `timingSafeEqual`);
 * - an API key is looked up by SHA-256(token); an active key's credential is then kept in
 *   memory (a FollowedCache, src/verify/caches/followed-cache.ts: at most WRIT_CACHE_TTL_MS, never
 *   while the process's LISTEN connection is down) and dropped, with every other, when any key
 *   or organization changes: this process drops them before it answers a key revocation, the
 *   others on the change notice Postgres sends when it commits (`writ_changes`, `keys`). So a
 *   revoked key is refused by every process within the notice's delivery (milliseconds);
 *   `app.credentials.clear()` drops them by hand;
 * - admin routes: no bearer 401, any bearer other than the admin token 403, and 503 while
 *   BUR_ADMIN_TOKEN is unset (checked after the bearer's presence);
 * - organization routes: no bearer, an unknown token or a revoked key 401; the admin token or
 *   a key lacking the route's scope 403 (unless the route accepts the admin).
 */
import { hash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { looksLikeKeyToken, type OrgType, type Scope } from "../../core/registry/index.js";
import { findKeyByToken } from "../../store/index.js";
import { FollowedCache } from "../../verify/index.js";
import { ApiError, settingNotSet } from "../errors.js";

/** Who is calling. */
export type Credential = { kind: "admin" } | { kind: "key"; org_id: string; org_type: OrgType; key_id: string; scopes: Scope[] };

/** An organization API key credential. */
export type KeyCredential = Extract<Credential, { kind: "key" }>;

/** A hook that authenticates a request or throws the 401/403/503. */
export type AuthHook = (request: FastifyRequest) => Promise<void>;

/** Options of `requireScope`. */
export interface RequireScopeOptions {
  /** Also accept the admin token (key issuing). */
  admin?: boolean;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The request's credential; throws 401 (no bearer, unknown token, revoked key). */
    authenticate(request: FastifyRequest): Promise<Credential>;
    /** Hook: only the admin token passes. */
    readonly requireAdmin: AuthHook;
    /** Hook factory: an organization key holding `scope` passes (and the admin, with `{admin: true}`). */
    requireScope(scope: Scope, opts?: RequireScopeOptions): AuthHook;
    /** Credentials of active API keys kept in memory (see src/api/plugins/auth.ts). */
    readonly credentials: Pick<FollowedCache<KeyCredential>, "clear" | "size">;
  }
  interface FastifyRequest {
    /** Set by the registry's auth hooks; null before (and on routes without them). */
    credential: Credential | null;
  }
}

const BEARER_RE = /^Bearer +(\S+) *$/i;

/** The bearer token of an Authorization header value, or null. */
export function bearerToken(authorization: unknown): string | null {
  const m = typeof authorization === "string" ? BEARER_RE.exec(authorization) : null;
  return m?.[1] ?? null;
}

/** SHA-256 of a token, base64 (one-shot `crypto.hash`: the cheapest digest on the hot path). */
function digest(s: string): string {
  return hash("sha256", s, "base64");
}

/** The key credential of a request that passed `requireScope`; throws INTERNAL otherwise. */
export function keyCredential(request: FastifyRequest): KeyCredential {
  const c = request.credential;
  if (c === null || c.kind !== "key") throw new ApiError("INTERNAL");
  return c;
}

async function lookUpKey(app: FastifyInstance, token: string): Promise<KeyCredential> {
  const key = await findKeyByToken(app.requireDb(), token);
  if (!key || key.org_status !== "active") throw new ApiError("TOKEN_UNKNOWN");
  if (key.revoked) throw new ApiError("KEY_REVOKED");
  return { kind: "key", org_id: key.org_id, org_type: key.org_type, key_id: key.key_id, scopes: key.scopes };
}

async function authenticate(app: FastifyInstance, cache: FollowedCache<KeyCredential>, request: FastifyRequest): Promise<Credential> {
  const token = bearerToken(request.headers.authorization);
  if (token === null) throw new ApiError("BEARER_REQUIRED");
  const given = digest(token);
  if (isAdmin(app, given)) return { kind: "admin" };
  if (!looksLikeKeyToken(token)) throw new ApiError("TOKEN_UNKNOWN");
  app.requireDb();
  // Kept by the token's digest (never the token); a refusal is never kept.
  return cache.load(given, () => lookUpKey(app, token));
}

/** SHA-256 of the admin token (the bytes of its base64), computed once per token value. */
let adminDigest: { token: string; digest: Buffer } | null = null;

/** True when `given` (a token's SHA-256, base64) is the admin token's, in constant time. */
function isAdmin(app: FastifyInstance, given: string): boolean {
  const admin = app.settings.adminToken;
  if (admin === null) return false;
  if (adminDigest?.token !== admin) adminDigest = { token: admin, digest: Buffer.from(digest(admin), "latin1") };
  // Both are 44 characters of base64: equal lengths, as timingSafeEqual needs.
  return timingSafeEqual(Buffer.from(given, "latin1"), adminDigest.digest);
}

export default fp(
  async (app) => {
    app.decorateRequest("credential", null);
    const cache = new FollowedCache<KeyCredential>({ ttlMs: app.settings.verify.cacheTtlMs });
    if (app.changeFeed) {
      cache.follow(app.changeFeed);
      app.changeFeed.on("changed", (c) => {
        if (c.kind === "keys") cache.clear();
      });
    }
    app.decorate("credentials", cache);
    app.decorate("authenticate", (request: FastifyRequest) => authenticate(app, cache, request));

    app.decorate("requireAdmin", async (request: FastifyRequest) => {
      const token = bearerToken(request.headers.authorization);
      if (token === null) throw new ApiError("BEARER_REQUIRED");
      const admin = app.settings.adminToken;
      if (admin === null) throw settingNotSet("BUR_ADMIN_TOKEN");
      if (!isAdmin(app, digest(token))) throw new ApiError("ADMIN_REQUIRED");
      request.credential = { kind: "admin" };
    });

    app.decorate("requireScope", (scope: Scope, opts: RequireScopeOptions = {}): AuthHook => {
      return async (request) => {
        const credential = await authenticate(app, cache, request);
        if (credential.kind === "admin") {
          if (!opts.admin) throw new ApiError("ORG_KEY_REQUIRED");
        } else if (!credential.scopes.includes(scope)) {
          throw new ApiError("SCOPE_MISSING", `API key lacks the scope ${scope}`);
        }
        request.credential = credential;
      };
    });
  },
  { name: "writ-auth", dependencies: ["writ-db", "writ-changes"] },
);
