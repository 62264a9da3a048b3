import { createHash, randomBytes } from "node:crypto";
import { createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/api/settings.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let db: TestDatabase;
let server: TestServer;
const servers: TestServer[] = [];
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Every response text seen by `call`, for the "no e-mail elsewhere" check (me and mailbox excluded). */
const transcript: string[] = [];

async function start(env: Record<string, string> = {}, withDb = true): Promise<TestServer> {
  const s = await startTestServer({ ...(withDb ? { DATABASE_URL: db.url } : {}), ...env });
  servers.push(s);
  return s;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
  ms: number;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, record = true): Promise<Answer> {
  const t0 = performance.now();
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  const ms = performance.now() - t0;
  if (record) transcript.push(text);
  return { status: r.status, body: JSON.parse(text) as Record<string, unknown>, headers: r.headers, ms };
}

const magicLink = (email: unknown, base = server.url) => call(base, "POST", "/v1/portal/magic-link", { email });
const exchange = (token: unknown, base = server.url) => call(base, "POST", "/v1/sessions", { token });
const me = (session: string | null, base = server.url) =>
  call(base, "GET", "/v1/portal/me", undefined, session === null ? {} : { authorization: `Bearer ${session}` }, false);
const signOut = (session: string, base = server.url) => call(base, "DELETE", "/v1/sessions/current", undefined, { authorization: `Bearer ${session}` });
const mailbox = (base = server.url) => call(base, "GET", "/v1/dev/mailbox", undefined, {}, false);

/** Sends a link to `email` and returns the token from the dev mailbox. */
async function tokenFor(email: string, base = server.url): Promise<string> {
  expect((await magicLink(email, base)).body).toEqual({ sent: true });
  const m = await mailbox(base);
  expect(m.status).toBe(200);
  return m.body.token as string;
}

async function signIn(email: string, base = server.url): Promise<{ session_token: string; principal_id: string; expires_at: string }> {
  const r = await exchange(await tokenFor(email, base), base);
  expect(r.status).toBe(200);
  return r.body as { session_token: string; principal_id: string; expires_at: string };
}

const uniqueEmail = (tag: string) => `${tag}.${randomBytes(4).toString("hex")}@example.test`;
const INVALID_LINK = { error: "sign-in link is invalid or expired" };
const NO_SESSION = { error: "portal session is missing, invalid or expired" };

beforeAll(async () => {
  db = await createTestDatabase();
  // A generous per-client limit: every request of this file comes from 127.0.0.1.
  server = await startTestServer({
    DATABASE_URL: db.url,
    BUR_DEV_MAILBOX: "1",
    WRIT_PUBLIC_BASE_URL: "https://portal.example.test/",
    BUR_MAGIC_LINK_PER_CLIENT: "100000",
  });
});

afterAll(async () => {
  await server?.close();
  for (const s of servers) await s.close();
  await db?.drop();
});

describe("POST /v1/portal/magic-link", () => {
  it("answers {sent: true} for a new address, creates a principal and keeps the link in the dev mailbox", async () => {
    const email = uniqueEmail("New.User");
    const r = await magicLink(`  ${email.toUpperCase()} `);
    expect(r).toMatchObject({ status: 200, body: { sent: true } });
    const m = await mailbox();
    expect(m.status).toBe(200);
    expect(Object.keys(m.body).sort()).toEqual(["email", "link", "sent_at", "token"]);
    expect(m.body.email).toBe(email.toLowerCase());
    expect(m.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(m.body.link).toBe(`https://portal.example.test/portal/sign-in#token=${m.body.token as string}`);
    expect(Number.isNaN(Date.parse(m.body.sent_at as string))).toBe(false);
    expect(m.headers.get("cache-control")).toBe("no-store");
    const { rows } = await db.pool.query("SELECT principal_id FROM portal_principals WHERE email = $1", [email.toLowerCase()]);
    expect(rows).toHaveLength(1);
    expect(rows[0].principal_id).toMatch(/^prn_[A-Za-z0-9_-]{22}$/);
  });

  it("answers a known address exactly like an unknown one and keeps its principal", async () => {
    const email = uniqueEmail("known");
    const first = await magicLink(email);
    const firstToken = (await mailbox()).body.token as string;
    const again = await magicLink(email);
    const secondToken = (await mailbox()).body.token as string;
    const unknown = await magicLink(uniqueEmail("unknown"));
    for (const r of [first, again, unknown]) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ sent: true });
    }
    expect(secondToken).not.toBe(firstToken);
    const a = await exchange(firstToken);
    const b = await exchange(secondToken);
    expect(a.body.principal_id).toBe(b.body.principal_id);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM portal_principals WHERE email = $1", [email]);
    expect(rows[0]).toEqual({ n: 1 });
  });

  it("stores tokens only as SHA-256", async () => {
    const token = await tokenFor(uniqueEmail("hash"));
    const hash = createHash("sha256").update(token).digest();
    const { rows } = await db.pool.query("SELECT * FROM portal_sign_in_tokens WHERE token_hash = $1", [hash]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("answers 400 only when the body is not an object with a string email", async () => {
    for (const body of [[], "x", { mail: "a@b.c" }, { email: 5 }, { email: null }, { email: ["a@b.c"] }]) {
      const r = await call(server.url, "POST", "/v1/portal/magic-link", body);
      expect(r.status).toBe(400);
      expect(typeof r.body.error).toBe("string");
    }
    expect((await call(server.url, "POST", "/v1/portal/magic-link", "{not json")).status).toBe(400);
  });

  it("answers {sent: true} for an implausible address and does nothing with it", async () => {
    const before = (await mailbox()).body;
    const {
      rows: [count],
    } = await db.pool.query("SELECT count(*)::int AS n FROM portal_principals");
    for (const email of ["", "no-at-sign", "two@@example.test", "a b@example.test", "x@y\r\nBcc: z@example.test", `${"a".repeat(250)}@example.test`]) {
      expect(await magicLink(email)).toMatchObject({ status: 200, body: { sent: true } });
    }
    expect((await mailbox()).body).toEqual(before);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM portal_principals")).rows[0]).toEqual(count);
  });
});

describe("POST /v1/sessions", () => {
  it("exchanges a token for a session once; the token is single-use", async () => {
    const email = uniqueEmail("session");
    const token = await tokenFor(email);
    const t0 = Date.now();
    const r = await exchange(token);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "principal_id", "session_token"]);
    expect(r.body.session_token).toMatch(/^bps_[A-Za-z0-9_-]{43}$/);
    expect(r.body.principal_id).toMatch(/^prn_/);
    const lifetime = Date.parse(r.body.expires_at as string) - t0;
    expect(lifetime).toBeGreaterThan(12 * 3600_000 - 5000);
    expect(lifetime).toBeLessThan(12 * 3600_000 + 5000);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(await exchange(token)).toMatchObject({ status: 401, body: INVALID_LINK });
    const hash = createHash("sha256")
      .update(r.body.session_token as string)
      .digest();
    expect((await db.pool.query("SELECT 1 FROM portal_sessions WHERE session_hash = $1", [hash])).rowCount).toBe(1);
  });

  it("answers 401 for unknown tokens and 400 for a body without a string token", async () => {
    for (const t of ["", "nope", randomBytes(32).toString("base64url"), "x".repeat(5000)]) {
      expect(await exchange(t)).toMatchObject({ status: 401, body: INVALID_LINK });
    }
    for (const body of [{}, { token: 1 }, [], "t"]) {
      const r = await call(server.url, "POST", "/v1/sessions", body);
      expect(r.status).toBe(400);
      expect(typeof r.body.error).toBe("string");
    }
  });

  it("lets exactly one of many concurrent exchanges of the same token win", async () => {
    for (let round = 0; round < 3; round++) {
      const token = await tokenFor(uniqueEmail("race"));
      const answers = await Promise.all(Array.from({ length: 8 }, () => exchange(token)));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 401)).toHaveLength(7);
    }
  });

  it("refuses an expired link and ends an expired session (tiny lifetimes)", async () => {
    const short = await start({ BUR_DEV_MAILBOX: "1", BUR_MAGIC_LINK_TTL_SECONDS: "1", BUR_SESSION_TTL_SECONDS: "1" });
    const expired = await tokenFor(uniqueEmail("expiry"), short.url);
    const live = await signIn(uniqueEmail("expiry2"), short.url);
    expect((await me(live.session_token, short.url)).status).toBe(200);
    await delay(1100);
    expect(await exchange(expired, short.url)).toMatchObject({ status: 401, body: INVALID_LINK });
    expect(await me(live.session_token, short.url)).toMatchObject({ status: 401, body: NO_SESSION });
  });
});

describe("GET /v1/portal/me and DELETE /v1/sessions/current", () => {
  it("shows the session's own principal and e-mail, only to that session", async () => {
    const alice = uniqueEmail("alice");
    const bob = uniqueEmail("bob");
    const a = await signIn(alice);
    const b = await signIn(bob);
    expect(await me(a.session_token)).toMatchObject({ status: 200, body: { principal_id: a.principal_id, email: alice } });
    const mb = await me(b.session_token);
    expect(mb.body).toEqual({ principal_id: b.principal_id, email: bob });
    expect(JSON.stringify(mb.body)).not.toContain(alice);
    expect(mb.headers.get("cache-control")).toBe("no-store");
  });

  it("answers 401 without a valid session", async () => {
    expect(await me(null)).toMatchObject({ status: 401, body: NO_SESSION });
    expect(await me(`bps_${randomBytes(32).toString("base64url")}`)).toMatchObject({ status: 401, body: NO_SESSION });
    for (const h of ["Basic abc", "Bearer", "Bearer bur_abc", "Bearer bps_has space"]) {
      const r = await call(server.url, "GET", "/v1/portal/me", undefined, { authorization: h });
      expect(r).toMatchObject({ status: 401, body: NO_SESSION });
    }
    expect(await call(server.url, "DELETE", "/v1/sessions/current")).toMatchObject({ status: 401, body: NO_SESSION });
  });

  it("signs out the presented session only, for good", async () => {
    const email = uniqueEmail("signout");
    const one = await signIn(email);
    const two = await signIn(email);
    expect(await signOut(one.session_token)).toMatchObject({ status: 200, body: { signed_out: true } });
    expect(await me(one.session_token)).toMatchObject({ status: 401, body: NO_SESSION });
    expect(await signOut(one.session_token)).toMatchObject({ status: 401, body: NO_SESSION });
    expect((await me(two.session_token)).status).toBe(200);
  });
});

describe("dev mailbox setting", () => {
  it("is empty (404) before a link is sent, and the route does not exist when the setting is off", async () => {
    const fresh = await start({ BUR_DEV_MAILBOX: "1" });
    expect(await mailbox(fresh.url)).toMatchObject({ status: 404, body: { error: "dev mailbox is empty" } });
    const off = await start({ BUR_DEV_MAILBOX: "0" });
    expect(await magicLink(uniqueEmail("off"), off.url)).toMatchObject({ status: 200, body: { sent: true } });
    expect(await mailbox(off.url)).toMatchObject({ status: 404, body: { error: "route not found" } });
    const unset = await start({});
    expect(await mailbox(unset.url)).toMatchObject({ status: 404, body: { error: "route not found" } });
  });
});

describe("without storage", () => {
  it("answers 503 when DATABASE_URL is not set", async () => {
    const bare = await start({ BUR_DEV_MAILBOX: "1" }, false);
    const want = { status: 503, body: { error: "DATABASE_URL is not set" } };
    expect(await magicLink("a@example.test", bare.url)).toMatchObject(want);
    expect(await exchange("t", bare.url)).toMatchObject(want);
    expect(await me(`bps_${randomBytes(32).toString("base64url")}`, bare.url)).toMatchObject(want);
  });
});

/** A local SMTP server (no auth, no TLS) that keeps every message it receives. */
async function startSmtp(): Promise<{ port: number; messages: { from: string; to: string[]; raw: string }[]; close(): Promise<void> }> {
  const messages: { from: string; to: string[]; raw: string }[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
  const port = (smtp.server.address() as AddressInfo).port;
  return { port, messages, close: () => new Promise<void>((r) => smtp.close(() => r())) };
}

/** The text body of a raw single-part message, decoding quoted-printable or base64. */
function textBody(raw: string): string {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split);
  const body = raw.slice(split + 4);
  const cte = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
  if (cte === "base64") return Buffer.from(body, "base64").toString("utf8");
  if (cte === "quoted-printable") {
    return body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
  return body;
}

describe("sign-in mail over SMTP", () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(async () => {
    // Close the other servers first: their SMTP pools hold connections the SMTP server waits for.
    for (const s of servers.splice(0)) await s.close();
    await smtp?.close();
  });

  it("sends the link to the address; the token in the mail signs in", async () => {
    const mailing = await start({ BUR_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, BUR_MAIL_FROM: "portal@writ.test" });
    const email = uniqueEmail("smtp");
    const r = await magicLink(email, mailing.url);
    expect(r).toMatchObject({ status: 200, body: { sent: true } });
    await expect.poll(() => smtp.messages.filter((m) => m.to.includes(email)).length, { timeout: 5000 }).toBe(1);
    const msg = smtp.messages.find((m) => m.to.includes(email));
    expect(msg?.from).toBe("portal@writ.test");
    expect(msg?.raw).toMatch(/^Subject: Your Writ sign-in link/m);
    // Without WRIT_PUBLIC_BASE_URL the link points at this server itself (not a fixed port).
    const link = new RegExp(`${mailing.url.replace(/[.]/g, "\\.")}/portal/sign-in#token=([A-Za-z0-9_-]{43})`).exec(textBody(msg?.raw ?? ""));
    expect(link).not.toBeNull();
    const session = await exchange(link?.[1], mailing.url);
    expect(session.status).toBe(200);
    expect((await me(session.body.session_token as string, mailing.url)).body).toEqual({ principal_id: session.body.principal_id, email });
  });

  it("never makes the answer wait on SMTP (a server that never greets, a dead port)", async () => {
    const sockets: Socket[] = [];
    const silent: NetServer = createNetServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const silentPort = (silent.address() as AddressInfo).port;
    const probe = createNetServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    try {
      for (const port of [silentPort, deadPort]) {
        const s = await start({ BUR_SMTP_URL: `smtp://127.0.0.1:${port}` });
        await magicLink(uniqueEmail("warm"), s.url); // warm-up: route compilation, pool connection
        const r = await magicLink(uniqueEmail("slow"), s.url);
        expect(r).toMatchObject({ status: 200, body: { sent: true } });
        expect(r.ms).toBeLessThan(500);
      }
      await expect.poll(() => sockets.length).toBeGreaterThanOrEqual(1); // the mail was attempted
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe("the sign-in link and its page", () => {
  it("points at the configured public base URL, and the page at its path answers 200 (HTML and script)", async () => {
    const s = await start({ BUR_DEV_MAILBOX: "1", WRIT_PUBLIC_BASE_URL: "https://writ.example.test/" });
    await magicLink(uniqueEmail("page"), s.url);
    const link = new URL((await mailbox(s.url)).body.link as string);
    expect(link.origin).toBe("https://writ.example.test");
    expect(link.pathname).toBe("/portal/sign-in");
    expect(link.search).toBe("");
    expect(link.hash).toMatch(/^#token=[A-Za-z0-9_-]{43}$/);
    // This server is what the base URL fronts: the link's path answers here.
    const page = await fetch(`${s.url}${link.pathname}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    // Labelled and keyboard-usable: a language, a heading, a real submit button, a live status region.
    expect(html).toContain('<html lang="en">');
    expect(html).toMatch(/<h1 id="title">Sign in to Writ<\/h1>/);
    expect(html).toMatch(/<button id="continue" type="submit">Continue signing in<\/button>/);
    expect(html).toContain('role="status" aria-live="polite"');
    expect(html).toContain('<script src="sign-in.js" defer></script>');
    const script = await fetch(new URL("sign-in.js", `${s.url}${link.pathname}`));
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const js = await script.text();
    expect(js).toContain("location.hash");
    expect(js).toContain('new URL("../v1/sessions", location.href)');
  });

  it("without WRIT_PUBLIC_BASE_URL points at the port this server really listens on, and that page answers 200", async () => {
    const s = await start({ BUR_DEV_MAILBOX: "1" });
    await magicLink(uniqueEmail("port"), s.url);
    const link = (await mailbox(s.url)).body.link as string;
    expect(link.startsWith(`${s.url}/portal/sign-in#token=`)).toBe(true);
    expect((await fetch(link)).status).toBe(200); // fetch, like a browser, never sends the fragment
  });
});

describe("sign-in tokens never reach the log", () => {
  it("the link's token and the session token appear in no log line, at trace level; a token put in a query is redacted", async () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => void lines.push(line) };
    const s = await startTestServer({ DATABASE_URL: db.url, BUR_DEV_MAILBOX: "1", LOG_LEVEL: "trace" }, { logStream: stream });
    servers.push(s);
    await magicLink(uniqueEmail("logs"), s.url);
    const m = (await mailbox(s.url)).body as { link: string; token: string };
    expect((await fetch(m.link)).status).toBe(200);
    const session = await exchange(m.token, s.url);
    expect(session.status).toBe(200);
    const sessionToken = session.body.session_token as string;
    expect((await me(sessionToken, s.url)).status).toBe(200);
    // A link mangled into a query form: served, but logged without the token.
    expect((await fetch(`${s.url}/portal/sign-in?token=${m.token}&lang=en`)).status).toBe(200);
    const log = lines.join("");
    expect(log).toContain('"url":"/portal/sign-in"');
    expect(log).toContain('"url":"/portal/sign-in?token=[redacted]&lang=en"');
    expect(log).not.toContain(m.token);
    expect(log).not.toContain(sessionToken);
  });
});

describe("magic-link rate limits", () => {
  const tokensOf = async (email: string) =>
    (await db.pool.query("SELECT count(*)::int AS n FROM portal_sign_in_tokens t JOIN portal_principals p USING (principal_id) WHERE p.email = $1", [email]))
      .rows[0].n as number;

  it("the (N+1)th request for one address in the window sends no mail and stores no token, and still answers {sent: true}", async () => {
    const s = await start({ BUR_DEV_MAILBOX: "1", BUR_MAGIC_LINK_PER_ADDRESS: "2" });
    const email = uniqueEmail("limited");
    const sent: string[] = [];
    for (let i = 0; i < 2; i++) {
      expect(await magicLink(email, s.url)).toMatchObject({ status: 200, body: { sent: true } });
      sent.push((await mailbox(s.url)).body.token as string);
    }
    expect(new Set(sent).size).toBe(2);
    // The third (also spelled differently: the address is normalised first) is held back.
    expect(await magicLink(` ${email.toUpperCase()}`, s.url)).toMatchObject({ status: 200, body: { sent: true } });
    expect((await mailbox(s.url)).body.token).toBe(sent[1]);
    expect(await tokensOf(email)).toBe(2);
    // Another address from the same client is not affected.
    const other = uniqueEmail("other");
    await magicLink(other, s.url);
    expect((await mailbox(s.url)).body.email).toBe(other);
  });

  it("past the per-client limit, no address gets a link, and the answer is still {sent: true}", async () => {
    const s = await start({ BUR_DEV_MAILBOX: "1", BUR_MAGIC_LINK_PER_CLIENT: "3" });
    for (let i = 0; i < 3; i++) await magicLink(uniqueEmail(`client${i}`), s.url);
    const last = (await mailbox(s.url)).body.token;
    const fourth = uniqueEmail("client4");
    expect(await magicLink(fourth, s.url)).toMatchObject({ status: 200, body: { sent: true } });
    expect((await mailbox(s.url)).body.token).toBe(last);
    expect(await tokensOf(fourth)).toBe(0);
  });

  it("behind a trusted proxy (WRIT_TRUST_PROXY), counts each forwarded client on its own", async () => {
    const s = await start({ BUR_DEV_MAILBOX: "1", BUR_MAGIC_LINK_PER_CLIENT: "1", WRIT_TRUST_PROXY: "loopback" });
    const from = (ip: string, email: string) => call(s.url, "POST", "/v1/portal/magic-link", { email }, { "x-forwarded-for": ip });
    const [a, b, c] = [uniqueEmail("proxy-a"), uniqueEmail("proxy-b"), uniqueEmail("proxy-c")];
    await from("203.0.113.1", a);
    await from("203.0.113.2", b);
    await from("203.0.113.1", c); // the first client's second request: over its limit
    expect([await tokensOf(a), await tokensOf(b), await tokensOf(c)]).toEqual([1, 1, 0]);
  });
});

describe("e-mail privacy", () => {
  it("no e-mail address appears in any answer other than me and the dev mailbox", async () => {
    const { rows } = await db.pool.query<{ email: string }>("SELECT email FROM portal_principals");
    expect(rows.length).toBeGreaterThan(5);
    for (const path of ["/openapi.json", "/metrics", "/readyz"]) transcript.push(await (await fetch(`${server.url}${path}`)).text());
    const all = transcript.join("\n").toLowerCase();
    for (const { email } of rows) expect(all).not.toContain(email);
    expect(all).not.toMatch(/[a-z0-9.]+@example\.test/);
  });
});

describe("portal settings", () => {
  it("loads defaults, strips a trailing slash and reports unusable values", () => {
    const d = loadSettings({});
    expect(d.portal).toEqual({
      publicBaseUrl: null,
      magicLinkTtlSeconds: 900,
      linksPerAddress: 5,
      linksPerClient: 50,
      linkWindowSeconds: 900,
      sessionTtlSeconds: 43_200,
      smtpUrl: null,
      mailFrom: "writ@localhost",
      approvalTtlSeconds: 900,
    });
    expect(d.devMailbox).toBe(false);
    const bad = loadSettings({
      WRIT_PUBLIC_BASE_URL: "ftp://x",
      BUR_MAGIC_LINK_TTL_SECONDS: "0",
      BUR_SESSION_TTL_SECONDS: "1.5",
      BUR_SMTP_URL: "http://mail",
      BUR_MAGIC_LINK_PER_ADDRESS: "0",
      BUR_MAGIC_LINK_WINDOW_SECONDS: "x",
    });
    expect(bad.portal).toMatchObject({
      publicBaseUrl: null,
      magicLinkTtlSeconds: 900,
      sessionTtlSeconds: 43_200,
      smtpUrl: null,
      linksPerAddress: 5,
      linkWindowSeconds: 900,
    });
    expect(bad.problems.filter((p) => /WRIT_PUBLIC_BASE_URL|BUR_(MAGIC_LINK|SESSION_TTL|SMTP_URL)/.test(p))).toHaveLength(6);
    expect(loadSettings({ WRIT_PUBLIC_BASE_URL: "https://p.example/base/" }).portal.publicBaseUrl).toBe("https://p.example/base");
    expect(loadSettings({ WRIT_PUBLIC_BASE_URL: "https://user:pw@p.example" }).portal.publicBaseUrl).toBeNull();
    // The older name is still read, WRIT_PUBLIC_BASE_URL wins.
    expect(loadSettings({ BUR_PORTAL_URL: "https://old.example" }).portal.publicBaseUrl).toBe("https://old.example");
    expect(loadSettings({ BUR_PORTAL_URL: "https://old.example", WRIT_PUBLIC_BASE_URL: "https://new.example" }).portal.publicBaseUrl).toBe(
      "https://new.example",
    );
  });
});
