import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashOf } from "../../src/core/canonical/index.js";
import { P256_ORDER } from "../../src/core/jose/canonical-forms.js";
import { generateSigner, signJws, signerFromSeed, type Signer } from "../../src/core/jose/index.js";
import { amendMandate, mandateHash, signRevocation, type AgreementRevocation, type Mandate } from "../../src/core/agreement/index.js";
import { signRecord } from "../../src/core/jose/index.js";
import { listRevokedAgreementIds } from "../../src/store/agreements-read.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import type { RevocationLogAppender } from "../../src/store/revocation/log.js";
import pg from "pg";
import { parseRevocationNotice, REVOCATIONS_CHANNEL, type RevocationNotice } from "../../src/store/notify.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeRevocation, signPush, storeSignedAgreement, storedRevocation } from "../helpers/revocation-push.js";

let db: TestDatabase;
let server: TestServer;
let notifier: Signer;
const seed = randomBytes(32).toString("hex");
const logged: { revocation: AgreementRevocation; kid: string }[] = [];
let failLogAppend = false;

const appender: RevocationLogAppender = async (client, revocation, signer) => {
  // Runs inside the storing transaction: the row is visible to this client already.
  const { rowCount } = await client.query("SELECT 1 FROM revocations WHERE revocation_id = $1", [hashOf(revocation)]);
  if (rowCount !== 1) throw new Error("log append ran outside the storing transaction");
  if (failLogAppend) throw new Error("log append failed");
  logged.push({ revocation, kid: signer.kid });
};

function envFor(over: Record<string, string | undefined> = {}): Record<string, string> {
  const base: Record<string, string | undefined> = {
    DATABASE_URL: db.url,
    SVC_PUSH_NOTIFIER_JWK: JSON.stringify(notifier.publicJwk),
    SVC_LOG_SIGNING_SEED: seed,
    ...over,
  };
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
}

async function push(body: unknown, url = server.url, raw = false) {
  const r = await fetch(`${url}/v1/revocations/push`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function list(query = "") {
  const r = await fetch(`${server.url}/v1/revocations${query}`);
  return { status: r.status, headers: r.headers, body: (await r.json()) as { revocations: Record<string, unknown>[] } & { error?: string } };
}

beforeAll(async () => {
  db = await createTestDatabase();
  notifier = generateSigner();
  server = await startTestServer(envFor(), { pool: db.pool, appendRevocationToLog: appender });
});

afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe("POST /v1/revocations/push", () => {
  let first: AgreementRevocation;

  it("stores a verified revocation with a sequence and revocation_id = hashOf(revocation)", async () => {
    first = await storedRevocation(db.pool);
    const r = await push(await signPush(first, notifier));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ stored: true, revocation_id: hashOf(first), sequence: 1 });
    expect(logged).toHaveLength(1);
    expect(logged[0]?.revocation).toEqual(first);
    expect(logged[0]?.kid).toBe(signerFromSeed(seed).kid);
  });

  it("answers a repeat of the same revocation with stored:false and appends nothing", async () => {
    const again = await push(await signPush(first, notifier, { at: "2026-02-02T00:00:00Z" }));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ stored: false, revocation_id: hashOf(first) });
    expect(logged).toHaveLength(1);
    expect((await list()).body.revocations).toHaveLength(1);
  });

  it("numbers a new revocation with the next sequence", async () => {
    const second = await storedRevocation(db.pool, { reason: "second" });
    const r = await push(await signPush(second, notifier));
    expect(r.body).toEqual({ stored: true, revocation_id: hashOf(second), sequence: 2 });
  });

  describe("401 revocation push did not verify", () => {
    const cases: [string, () => Promise<unknown>][] = [
      [
        "a broken signature",
        async () => {
          const b = await signPush(await makeRevocation(), notifier);
          const sig = b.signature as { signature: string };
          const flipped = (sig.signature[0] === "A" ? "B" : "A") + sig.signature.slice(1);
          return { ...b, signature: { ...sig, signature: flipped } };
        },
      ],
      ["the wrong typ", async () => signPush(await makeRevocation(), notifier, { typ: "svc-revocation+jws" })],
      [
        "a body tampered with after signing",
        async () => {
          const b = await signPush(await makeRevocation(), notifier);
          return { ...b, revocation: { ...(b.revocation as object), reason: "changed" } };
        },
      ],
      ["an extra member added after signing", async () => ({ ...(await signPush(await makeRevocation(), notifier)), note: "x" })],
      ["a signature by another key", async () => signPush(await makeRevocation(), generateSigner())],
      ["a signature by a P-256 key", async () => signPush(await makeRevocation(), generateSigner("ES256"))],
      [
        "a signature whose payload is another body",
        async () => {
          const a = await signPush(await makeRevocation(), notifier);
          const b = await signPush(await makeRevocation(), notifier);
          return { ...a, signature: b.signature };
        },
      ],
      [
        "no signature",
        async () => {
          const { signature: _s, ...rest } = await signPush(await makeRevocation(), notifier);
          return rest;
        },
      ],
      ["a signature that is a string", async () => ({ ...(await signPush(await makeRevocation(), notifier)), signature: "abc" })],
      ["an empty object", async () => ({})],
    ];
    for (const [name, build] of cases) {
      it(`for ${name}`, async () => {
        const r = await push(await build());
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ error: "revocation push did not verify" });
      });
    }

    it("and stores nothing", async () => {
      expect((await list()).body.revocations).toHaveLength(2);
    });
  });

  describe("400 when the body is not a JSON object", () => {
    for (const [name, raw] of [
      ["an array", "[1,2]"],
      ["a string", '"revoke"'],
      ["null", "null"],
      ["a number", "42"],
      ["malformed JSON", '{"at":'],
    ] as const) {
      it(`for ${name}`, async () => {
        const r = await push(raw, server.url, true);
        expect(r.status).toBe(400);
        expect(Object.keys(r.body)).toEqual(["error"]);
        expect(typeof r.body.error).toBe("string");
      });
    }

    it("names the field when a signed body is malformed", async () => {
      const { agreement_id: _a, ...noAgreement } = await makeRevocation();
      const r = await push(await signPush(noAgreement, notifier));
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("revocation/agreement_id");
    });

    it("rejects a wrong version marker", async () => {
      const r = await push(await signPush(await makeRevocation(), notifier, { extra: { svc_revocation_push: "2" } }));
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("svc_revocation_push");
    });
  });

  it("rolls everything back when the log append fails", async () => {
    failLogAppend = true;
    try {
      const r = await push(await signPush(await storedRevocation(db.pool), notifier));
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: "internal error" });
    } finally {
      failLogAppend = false;
    }
    const after = await list();
    expect(after.body.revocations.map((x) => x.sequence)).toEqual([1, 2]);
    const next = await push(await signPush(await storedRevocation(db.pool), notifier));
    expect(next.body.sequence).toBe(3);
  });

  it("NOTIFYs writ_revocations in the storing transaction", async () => {
    // A plain LISTEN session: the test reads the wire payload itself.
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const got: RevocationNotice[] = [];
    listener.on("notification", (m) => {
      const n = m.channel === REVOCATIONS_CHANNEL ? parseRevocationNotice(m.payload) : undefined;
      if (n) got.push(n);
    });
    await listener.query(`LISTEN ${REVOCATIONS_CHANNEL}`);
    try {
      const rev = await storedRevocation(db.pool);
      const r = await push(await signPush(rev, notifier));
      await expect.poll(() => got.length).toBe(1);
      expect(got[0]).toEqual({
        sequence: r.body.sequence,
        revocation_id: hashOf(rev),
        agreement_id: rev.agreement_id,
        org_id: expect.any(String),
        mandate_hash: rev.mandate_hash,
        at: rev.at,
      });
      await push(await signPush(rev, notifier)); // a repeat announces nothing
      await new Promise((res) => setTimeout(res, 200));
      expect(got).toHaveLength(1);
    } finally {
      await listener.end();
    }
  });

  it("gives concurrent pushes gapless sequences", async () => {
    const before = (await list()).body.revocations.length;
    const bodies = await Promise.all(Array.from({ length: 12 }, async () => signPush(await storedRevocation(db.pool), notifier)));
    const results = await Promise.all(bodies.map((b) => push(b)));
    const seqs = results.map((r) => r.body.sequence as number).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 12 }, (_, i) => before + 1 + i));
  });
});

describe("POST /v1/revocations/push: the principal's own signature, against the stored agreement", () => {
  const pulled = async () => (await list("?limit=1000")).body.revocations.map((x) => x.revocation_id);
  const ZERO_SIGNATURE = "A".repeat(86); // 64 zero bytes

  async function refused(rev: unknown, status: number, error: RegExp | string) {
    const logBefore = logged.length;
    const r = await push(await signPush(rev, notifier));
    expect(r.status).toBe(status);
    if (typeof error === "string") expect(r.body).toEqual({ error });
    else expect(r.body.error).toMatch(error);
    // Neither stored nor republished: not in the pull list, not appended to the log.
    expect(await pulled()).not.toContain(hashOf(rev));
    expect(logged.length).toBe(logBefore);
  }

  it("refuses an all-zero inner signature (422) and stores nothing", async () => {
    const rev = await storedRevocation(db.pool);
    await refused(
      { ...rev, signature: { ...rev.signature, signature: ZERO_SIGNATURE } },
      422,
      /^principal revocation did not verify: the revocation signature does not verify/,
    );
  });

  it("refuses an inner revocation signed by another key than the agreement's principal", async () => {
    const { agreement } = await storeSignedAgreement(db.pool);
    const { principal: otherPrincipal } = await storeSignedAgreement(db.pool);
    // Well formed and signed, with this agreement's id and live mandate hash, but by another principal.
    const body = {
      svc_revocation: 1 as const,
      agreement_id: agreement.agreement_id,
      mandate_hash: mandateHash(agreement.mandates[0] as Mandate),
      at: "2026-01-02T00:00:00Z",
      reason: "x",
    };
    const forged = { ...body, signature: await signRecord(body, otherPrincipal, "svc-revocation+jws") };
    await refused(forged, 422, "principal revocation did not verify: the revocation signature does not verify with the principal key of the mandates");
  });

  it("names an inner payload that is not canonical JSON JWS_PAYLOAD_NOT_CANONICAL (422), not a signature failure", async () => {
    const { agreement, principal } = await storeSignedAgreement(db.pool);
    const body = {
      svc_revocation: 1 as const,
      agreement_id: agreement.agreement_id,
      mandate_hash: mandateHash(agreement.mandates[0] as Mandate),
      at: "2026-01-02T00:00:00Z",
      reason: "x",
    };
    // Signed by the agreement's principal over the revocation, spelled with whitespace.
    const spaced = { ...body, signature: await signJws(JSON.stringify(body, null, 2), principal, "svc-revocation+jws") };
    await refused(spaced, 422, "principal revocation did not verify: JWS_PAYLOAD_NOT_CANONICAL: JWS payload is not the RFC 8785 canonical form of its JSON");
  });

  it("refuses a revocation of a stale mandate hash (the intent was amended since)", async () => {
    const { agreement, principal } = await storeSignedAgreement(db.pool);
    const stale = await signRevocation(agreement, { reason: "old", at: "2026-01-02T00:00:00Z" }, principal);
    const amended = await amendMandate(agreement, "i1", { maximum_amount: 5 }, principal, {
      at: "2026-01-01T12:00:00Z",
      actor: { role: "principal", id: "prn_push" },
      event_id: "amend-1",
    });
    await upsertAgreement(db.pool, amended);
    await refused(stale, 422, "principal revocation did not verify: mandate_hash does not name the live mandate");
    // The same principal's revocation of the current version is stored.
    const current = await signRevocation(amended, { reason: "new", at: "2026-01-02T00:00:00Z" }, principal);
    expect((await push(await signPush(current, notifier))).body).toMatchObject({ stored: true, revocation_id: hashOf(current) });
  });

  it("with several intents, needs mandate_hashes covering every live mandate", async () => {
    const { agreement, principal } = await storeSignedAgreement(db.pool, 2);
    const full = await signRevocation(agreement, { reason: "all", at: "2026-01-02T00:00:00Z" }, principal);
    expect(full.mandate_hashes).toHaveLength(2);
    const { signature: _s, mandate_hashes: _h, ...partial } = full;
    const partialSigned = { ...partial, signature: await signRecord(partial, principal, "svc-revocation+jws") };
    await refused(partialSigned, 422, "principal revocation did not verify: the agreement holds several intents and the revocation carries no mandate_hashes");
    expect((await push(await signPush(full, notifier))).body).toMatchObject({ stored: true });
  });

  it("stores and republishes a valid one: pull list, transparency log and the agreement counts as revoked", async () => {
    const rev = await storedRevocation(db.pool);
    const r = await push(await signPush(rev, notifier));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stored: true, revocation_id: hashOf(rev) });
    expect(await pulled()).toContain(hashOf(rev));
    expect(logged.at(-1)?.revocation).toEqual(rev);
    expect((await listRevokedAgreementIds(db.pool)).map((r) => r.id)).toContain(rev.agreement_id);
  });

  it("refuses (404) a revocation of an agreement this service does not hold, and does not republish it", async () => {
    const rev = await makeRevocation();
    await refused(rev, 404, "agreement was not found");
    expect((await listRevokedAgreementIds(db.pool)).map((r) => r.id)).not.toContain(rev.agreement_id);
  });

  it("a principal's ES256 revocation signed in high S is stored; its low-S twin is the same revocation (one revocation_id)", async () => {
    const { agreement, principal } = await storeSignedAgreement(db.pool, 1, generateSigner("ES256"));
    const low = await signRevocation(agreement, { reason: "high S", at: "2026-01-02T03:04:05Z" }, principal);
    const sig = Buffer.from(low.signature.signature, "base64url");
    const s = BigInt(`0x${sig.subarray(32).toString("hex")}`);
    const twin = Buffer.concat([sig.subarray(0, 32), Buffer.from((P256_ORDER - s).toString(16).padStart(64, "0"), "hex")]);
    const high: AgreementRevocation = { ...low, signature: { ...low.signature, signature: twin.toString("base64url") } };
    const before = logged.length;
    expect((await push(await signPush(high, notifier))).body).toMatchObject({ stored: true, revocation_id: hashOf(low) });
    expect((await push(await signPush(low, notifier))).body).toEqual({ stored: false, revocation_id: hashOf(low) });
    expect(logged).toHaveLength(before + 1);
    expect(logged.at(-1)?.revocation).toEqual(low);
  });
});

describe("GET /v1/revocations", () => {
  it("lists stored revocations with Cache-Control: public, max-age=300", async () => {
    const r = await list();
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, max-age=300");
    const first = r.body.revocations[0] as { sequence: number; revocation_id: string; revocation: AgreementRevocation; received_at: string };
    expect(first.sequence).toBe(1);
    expect(first.revocation_id).toBe(hashOf(first.revocation));
    expect(Number.isNaN(Date.parse(first.received_at))).toBe(false);
    expect(r.body.revocations.map((x) => x.sequence)).toEqual(r.body.revocations.map((_, i) => i + 1));
  });

  it("resumes after a sequence and pages with limit", async () => {
    const all = (await list()).body.revocations;
    const page = await list("?after=1&limit=2");
    expect(page.body.revocations.map((x) => x.sequence)).toEqual([2, 3]);
    const rest = await list(`?after=${all.length}`);
    expect(rest.body.revocations).toEqual([]);
    const capped = await list("?limit=100000");
    expect(capped.status).toBe(200);
    expect(capped.body.revocations).toHaveLength(all.length);
  });

  for (const q of ["?after=abc", "?after=-1", "?limit=0", "?limit=x"]) {
    it(`answers 400 {error} for ${q}`, async () => {
      const r = await list(q);
      expect(r.status).toBe(400);
      expect(typeof r.body.error).toBe("string");
    });
  }
});

describe("503 when a setting is unset", () => {
  const cases: [string, Record<string, string | undefined>, string][] = [
    ["SVC_PUSH_NOTIFIER_JWK", { SVC_PUSH_NOTIFIER_JWK: undefined }, "SVC_PUSH_NOTIFIER_JWK is not set"],
    ["SVC_LOG_SIGNING_SEED", { SVC_LOG_SIGNING_SEED: undefined }, "SVC_LOG_SIGNING_SEED is not set"],
    ["DATABASE_URL", { DATABASE_URL: undefined }, "DATABASE_URL is not set"],
  ];
  for (const [name, over, text] of cases) {
    it(`push answers 503 {error: "${text}"} without ${name}, even for a non-object body`, async () => {
      const s = await startTestServer(envFor(over), name === "DATABASE_URL" ? {} : { pool: db.pool });
      try {
        const good = await push(await signPush(await makeRevocation(), notifier), s.url);
        expect(good).toEqual({ status: 503, body: { error: text } });
        const bad = await push("[]", s.url, true);
        expect(bad).toEqual({ status: 503, body: { error: text } });
      } finally {
        await s.close();
      }
    });
  }

  it('pull list answers 503 {error: "DATABASE_URL is not set"} without storage', async () => {
    const s = await startTestServer(envFor({ DATABASE_URL: undefined }));
    try {
      const r = await fetch(`${s.url}/v1/revocations`);
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ error: "DATABASE_URL is not set" });
    } finally {
      await s.close();
    }
  });

  it("push answers 500 when the notifier JWK is set but does not load", async () => {
    const s = await startTestServer(envFor({ SVC_PUSH_NOTIFIER_JWK: '{"kty":"OKP","crv":"Ed25519","x":"short"}' }), { pool: db.pool });
    try {
      const r = await push(await signPush(await makeRevocation(), notifier), s.url);
      expect(r).toEqual({ status: 500, body: { error: "SVC_PUSH_NOTIFIER_JWK failed to load" } });
    } finally {
      await s.close();
    }
  });
});

describe("with the transparency log store", () => {
  it("appends each stored revocation to the log as kind revocation, once", async () => {
    const logDb = await createTestDatabase();
    const s = await startTestServer(envFor({ DATABASE_URL: logDb.url }), { pool: logDb.pool });
    try {
      const rev = await storedRevocation(logDb.pool);
      const stored = await push(await signPush(rev, notifier), s.url);
      expect(stored.body).toMatchObject({ stored: true, sequence: 1 });
      await push(await signPush(rev, notifier, { at: "2026-03-03T00:00:00Z" }), s.url); // repeat
      const head = (await (await fetch(`${s.url}/v1/log/head`)).json()) as { tree_size: number };
      expect(head.tree_size).toBe(1);
      const entry = (await (await fetch(`${s.url}/v1/log/entries/1`)).json()) as { entry: { kind: string; body: unknown } };
      expect(entry.entry.kind).toBe("revocation");
      expect(entry.entry.body).toEqual(JSON.parse(JSON.stringify(rev)));
    } finally {
      await s.close();
      await logDb.drop();
    }
  });
});
