import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOOPBACK_OUTBOUND, STRICT_OUTBOUND } from "../../../src/http/outbound-address.js";
import type { Connect, Resolve } from "../../../src/http/outbound.js";
import {
  buildSignedAgreement,
  mandateHash,
  prepareAgreement,
  signAcknowledgement,
  signMandate,
  type IntentAgreement,
  type Mandate,
} from "../../../src/core/agreement/index.js";
import type { PreparedAgreement } from "../../../src/core/evaluate/index.js";
import { keyId, type Signer } from "../../../src/core/jose/index.js";
import {
  AckDomainDirectory,
  isFetchableDomain,
  keyListFetcher,
  KEY_LIST_FAILURE_TTL_MS,
  KEY_LIST_TTL_MS,
  MAX_KEY_LIST_BYTES,
  publishedKeyIds,
  selfAsserted,
  type KeyListFetch,
} from "../../../src/verify/pipeline/ack-domains.js";
import type { VerifySettings } from "../../../src/verify/settings.js";
import { iso, merchantKey, otherKey, PRINCIPAL, principalKey, T0 } from "../../fixtures/records.js";

const SETTINGS: Pick<VerifySettings, "ackDomainScheme" | "ackDomainPort" | "ackDomainTimeoutMs"> = {
  ackDomainScheme: "https",
  ackDomainPort: null,
  ackDomainTimeoutMs: 2000,
};

/** A fake fetch: answers per URL from `lists` (a thrown value for an Error), counting calls. */
function fakeFetch(lists: Record<string, unknown>) {
  const calls: string[] = [];
  const fetch: KeyListFetch = async (url) => {
    calls.push(url);
    const v = lists[url];
    if (v instanceof Error || v === undefined) throw v ?? new Error(`no list at ${url}`);
    return v;
  };
  return { calls, fetch };
}

const listOf = (...signers: Signer[]) => ({ keys: signers.map((s) => ({ public_key: s.publicJwk })) });
const url = (domain: string) => `https://${domain}/.well-known/svc-keys.json`;

describe("isFetchableDomain", () => {
  it("accepts plain DNS names", () => {
    for (const d of [
      "example.com",
      "shop.example.co.uk",
      "a-b.example",
      "x",
      "example.com.",
      "localhost",
      "1password.com",
      "0x.example",
      `${"a".repeat(63)}.com`,
    ]) {
      expect(isFetchableDomain(d), d).toBe(true);
    }
  });

  it("refuses anything that could steer the request elsewhere, and non-strings", () => {
    const bad = [
      "",
      ".",
      "-shop.example",
      "shop-.example",
      "a..b",
      "user@example.com",
      "example.com:8443",
      "example.com/path",
      "example.com?x",
      "[::1]",
      "::1",
      "exa mple.com",
      // IP literals in every form the URL parser reads as one, and names that end in a number
      "127.0.0.1",
      "10.0.0.5",
      "169.254.169.254",
      "2130706433",
      "127.1",
      "0x7f.1",
      "0x7f000001",
      "0177.0.0.1",
      "127.0.0.1.",
      "1.2.3.4.5",
      "example.123",
      "example.0x1",
      "exämple.com",
      "example.com\u0000",
      `${"a".repeat(64)}.com`,
      `${"a.".repeat(126)}ab`,
      "http://example.com",
    ];
    for (const d of bad) expect(isFetchableDomain(d), JSON.stringify(d)).toBe(false);
    for (const v of [undefined, null, 42, {}, ["example.com"]]) expect(isFetchableDomain(v)).toBe(false);
  });
});

describe("publishedKeyIds", () => {
  it("publishes the RFC 7638 thumbprint of each usable public key", () => {
    const ids = publishedKeyIds({
      keys: [{ public_key: merchantKey.publicJwk, domain: "m.example" }, { public_key: { ...otherKey.publicJwk, kid: "claimed" } }],
    });
    expect(ids).toEqual(new Set([keyId(merchantKey.publicJwk), keyId(otherKey.publicJwk)]));
  });

  it("skips private keys, broken records and anything that is not a key list", () => {
    const priv = { ...merchantKey.publicJwk, d: "AAAA" };
    expect(
      publishedKeyIds({ keys: [{ public_key: priv }, { public_key: { kty: "RSA", n: "x", e: "AQAB" } }, null, "x", {}, { public_key: otherKey.publicJwk }] }),
    ).toEqual(new Set([keyId(otherKey.publicJwk)]));
    for (const v of [null, undefined, "keys", [], { keys: "x" }, { keys: {} }, [merchantKey.publicJwk]]) expect(publishedKeyIds(v).size).toBe(0);
  });
});

describe("AckDomainDirectory.urlFor", () => {
  it("builds <scheme>://<domain>[:<port>]/.well-known/svc-keys.json, lower-case, without a trailing dot", () => {
    expect(new AckDomainDirectory({ settings: SETTINGS }).urlFor("Shop.Example.")).toBe("https://shop.example/.well-known/svc-keys.json");
    const local = new AckDomainDirectory({ settings: { ackDomainScheme: "http", ackDomainPort: 8443, ackDomainTimeoutMs: 5 } });
    expect(local.urlFor("127.0.0.1")).toBe("http://127.0.0.1:8443/.well-known/svc-keys.json");
  });
});

describe("AckDomainDirectory.publishedKeys", () => {
  it("fetches nothing for a domain that is not a plain name, and publishes nothing for it", async () => {
    const f = fakeFetch({});
    const dir = new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch });
    for (const d of ["evil.example:80", "u@evil.example", "evil.example/x", "[::1]"]) expect((await dir.publishedKeys(d)).size).toBe(0);
    expect(f.calls).toEqual([]);
  });

  it("passes the timeout setting to the fetch", async () => {
    const seen: number[] = [];
    const dir = new AckDomainDirectory({ settings: { ...SETTINGS, ackDomainTimeoutMs: 1234 }, fetch: async (_u, t) => (seen.push(t), listOf(merchantKey)) });
    await dir.publishedKeys("m.example");
    expect(seen).toEqual([1234]);
  });

  it("caches an answer for five minutes per domain (case and trailing dot folded), then fetches again", async () => {
    let now = T0;
    const f = fakeFetch({ [url("m.example")]: listOf(merchantKey) });
    const dir = new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch, clock: () => now });
    expect(await dir.publishedKeys("m.example")).toEqual(new Set([keyId(merchantKey.publicJwk)]));
    now += KEY_LIST_TTL_MS - 1;
    await dir.publishedKeys("M.Example.");
    await dir.publishedKeys("m.example");
    expect(f.calls).toHaveLength(1);
    now += 1;
    await dir.publishedKeys("m.example");
    expect(f.calls).toHaveLength(2);
  });

  it("publishes nothing when the fetch fails, remembers the failure for 30 seconds, then retries", async () => {
    let now = T0;
    const lists: Record<string, unknown> = { [url("m.example")]: new Error("down") };
    const f = fakeFetch(lists);
    const dir = new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch, clock: () => now });
    expect((await dir.publishedKeys("m.example")).size).toBe(0);
    lists[url("m.example")] = listOf(merchantKey);
    now += KEY_LIST_FAILURE_TTL_MS - 1;
    expect((await dir.publishedKeys("m.example")).size).toBe(0);
    expect(f.calls).toHaveLength(1);
    now += 1;
    expect(await dir.publishedKeys("m.example")).toEqual(new Set([keyId(merchantKey.publicJwk)]));
    expect(f.calls).toHaveLength(2);
  });

  it("a malformed answer publishes nothing", async () => {
    const f = fakeFetch({ [url("m.example")]: { keys: [{ public_key: "nope" }] } });
    expect((await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).publishedKeys("m.example")).size).toBe(0);
  });

  it("concurrent lookups of one domain share one request", async () => {
    let release: (v: unknown) => void = () => {};
    let calls = 0;
    const dir = new AckDomainDirectory({ settings: SETTINGS, fetch: () => (calls++, new Promise((r) => (release = r))) });
    const all = Promise.all(Array.from({ length: 10 }, () => dir.publishedKeys("m.example")));
    release(listOf(merchantKey));
    const sets = await all;
    expect(calls).toBe(1);
    for (const s of sets) expect(s.has(keyId(merchantKey.publicJwk))).toBe(true);
  });

  it("keeps at most 1000 domains: the least recently fetched is forgotten first", async () => {
    const calls: string[] = [];
    const fetch: KeyListFetch = async (u) => (calls.push(u), listOf(merchantKey));
    const dir = new AckDomainDirectory({ settings: SETTINGS, fetch, clock: () => T0 });
    for (let i = 0; i <= 1000; i++) await dir.publishedKeys(`d${i}.example`);
    expect(calls).toHaveLength(1001);
    await dir.publishedKeys("d1000.example");
    await dir.publishedKeys("d1.example");
    expect(calls).toHaveLength(1001);
    await dir.publishedKeys("d0.example");
    expect(calls).toHaveLength(1002);
    expect(calls.at(-1)).toBe(url("d0.example"));
  });
});

describe("AckDomainDirectory.apply", () => {
  /** A prepared agreement whose intent requires a merchant ack, with the given acks. */
  async function prepared(
    acks: (a: IntentAgreement) => Promise<IntentAgreement["acknowledgements"]>,
    over: Partial<IntentAgreement> = {},
  ): Promise<PreparedAgreement> {
    const mandate: Mandate = {
      intent_id: "i1",
      principal: { ...PRINCIPAL },
      agent: { agent_id: "agent-1" },
      currency: "USD",
      maximum_amount: 100,
      expires_at: iso(T0 + 86_400_000),
      required_acknowledgements: ["merchant"],
    };
    const a = { ...(await buildSignedAgreement({ agreement_id: "agr-1", mandates: [mandate], at: iso(T0 - 1000) }, principalKey)), ...over };
    return prepareAgreement({ ...a, acknowledgements: await acks(a) }, { now: T0 });
  }
  /** An organization id: the record stores accept an ack naming it only when signed by a key it registered. */
  const ORG = "org_0123456789abcdef01234567";
  const ack = (a: IntentAgreement, signer: Signer, domain?: string, hash?: string, id = ORG) =>
    signAcknowledgement(
      {
        agreement_id: a.agreement_id,
        mandate_hash: (hash ?? mandateHash(a.mandates[0] as Mandate)) as never,
        role: "merchant",
        id,
        at: iso(T0 - 500),
        ...(domain ? { domain } : {}),
      },
      signer,
    );

  it("returns the agreement itself when every acknowledgement names an organization and none a domain (nothing fetched)", async () => {
    const f = fakeFetch({});
    const p = await prepared(async (a) => [await ack(a, merchantKey)]);
    expect(p.mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);
    expect(await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1)).toBe(p);
    expect(f.calls).toEqual([]);
  });

  it("returns the agreement itself when the domain publishes the ack's key", async () => {
    const f = fakeFetch({ [url("m.example")]: listOf(otherKey, merchantKey) });
    const p = await prepared(async (a) => [await ack(a, merchantKey, "m.example")]);
    expect(await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1)).toBe(p);
    expect(f.calls).toEqual([url("m.example")]);
  });

  it("drops an ack whose key the domain does not publish: the role becomes missing; the input is not changed", async () => {
    const f = fakeFetch({ [url("m.example")]: listOf(otherKey) });
    const p = await prepared(async (a) => [await ack(a, merchantKey, "m.example")]);
    const out = await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1);
    expect(out).not.toBe(p);
    expect(out.mandates[0]?.acks).toEqual([{ role: "merchant", state: "missing" }]);
    expect(p.mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);
    expect(out.agreement).toBe(p.agreement);
  });

  it("fails closed where the outbound policy refuses the domain's address: no socket opened, the ack counts as absent", async () => {
    for (const address of ["10.0.0.5", "169.254.169.254", "::ffff:127.0.0.1"]) {
      const resolve = vi.fn<Resolve>(async () => [{ address, family: address.includes(":") ? 6 : 4 }]);
      const connect = vi.fn<Connect>(() => {
        throw new Error("no socket may be opened");
      });
      const dir = new AckDomainDirectory({ settings: SETTINGS, fetch: keyListFetcher(STRICT_OUTBOUND, { resolve, connect }) });
      const p = await prepared(async (a) => [await ack(a, merchantKey, "merchant.example")]);
      expect((await dir.apply(p, 1)).mandates[0]?.acks, address).toEqual([{ role: "merchant", state: "missing" }]);
      expect(resolve).toHaveBeenCalledWith("merchant.example");
      expect(connect).not.toHaveBeenCalled();
    }
  });

  it("fails closed: an unreachable domain, or a domain that cannot be fetched, drops its ack", async () => {
    const f = fakeFetch({});
    for (const domain of ["down.example", "m.example:443", "127.0.0.1", "2130706433"]) {
      const p = await prepared(async (a) => [await ack(a, merchantKey, domain)]);
      expect((await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1)).mandates[0]?.acks).toEqual([
        { role: "merchant", state: "missing" },
      ]);
    }
  });

  it("judges the key by its thumbprint, not by a claimed kid", async () => {
    const f = fakeFetch({ [url("m.example")]: { keys: [{ public_key: { ...otherKey.publicJwk, kid: keyId(merchantKey.publicJwk) } }] } });
    const p = await prepared(async (a) => [await ack(a, merchantKey, "m.example")]);
    expect((await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1)).mandates[0]?.acks).toEqual([
      { role: "merchant", state: "missing" },
    ]);
  });

  it("drops a payment-side ack that names neither an organization nor a domain (its signer alone vouches for it): the role is missing", async () => {
    const f = fakeFetch({});
    const p = await prepared(async (a) => [await ack(a, merchantKey, undefined, undefined, "m-1")]);
    expect(p.mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);
    const out = await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1);
    expect(out.mandates[0]?.acks).toEqual([{ role: "merchant", state: "missing" }]);
    expect(f.calls).toEqual([]);
    expect(selfAsserted(await ack(p.agreement, merchantKey, undefined, undefined, "m-1"))).toBe(true);
    expect(selfAsserted(await ack(p.agreement, merchantKey, "m.example", undefined, "m-1"))).toBe(false);
    expect(selfAsserted(await ack(p.agreement, merchantKey))).toBe(false);
    const agentAck = await signAcknowledgement(
      { agreement_id: "agr-1", mandate_hash: mandateHash(p.agreement.mandates[0] as Mandate), role: "agent", id: "agent-1", at: iso(T0 - 500) },
      merchantKey,
    );
    expect(selfAsserted(agentAck)).toBe(false);
  });

  it("keeps acks of an organization without a domain: the role stays current through one", async () => {
    const f = fakeFetch({ [url("m.example")]: listOf(otherKey) });
    const p = await prepared(async (a) => [await ack(a, merchantKey, "m.example"), await ack(a, otherKey)]);
    const out = await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1);
    expect(out.mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);
  });

  it("an unpublished ack of the current version leaves an ack of an earlier version: outdated", async () => {
    const f = fakeFetch({ [url("m.example")]: listOf(otherKey) });
    const earlier = await signMandate(
      {
        intent_id: "i1",
        principal: { ...PRINCIPAL },
        agent: { agent_id: "agent-1" },
        currency: "USD",
        maximum_amount: 50,
        expires_at: iso(T0 + 86_400_000),
        required_acknowledgements: ["merchant"],
        rendering: "earlier",
      },
      principalKey,
    );
    const p = await prepared(async (a) => [await ack(a, otherKey, undefined, mandateHash(earlier)), await ack(a, merchantKey, "m.example")], {
      mandate_history: [earlier],
    });
    expect(p.mandates[0]?.acks).toEqual([{ role: "merchant", state: "current" }]);
    const out = await new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch }).apply(p, 1);
    expect(out.mandates[0]?.acks).toEqual([{ role: "merchant", state: "outdated" }]);
  });

  it("caches the re-computed states per agreement revision", async () => {
    const f = fakeFetch({ [url("m.example")]: listOf(otherKey) });
    const dir = new AckDomainDirectory({ settings: SETTINGS, fetch: f.fetch });
    const p = await prepared(async (a) => [await ack(a, merchantKey, "m.example")]);
    const one = await dir.apply(p, 1);
    const again = await dir.apply(p, 1);
    const next = await dir.apply(p, 2);
    expect(again.mandates[0]?.acks).toBe(one.mandates[0]?.acks);
    expect(next.mandates[0]?.acks).not.toBe(one.mandates[0]?.acks);
    expect(next.mandates[0]?.acks).toEqual(one.mandates[0]?.acks);
  });
});

describe("keyListFetcher (the default fetch, against a local server)", () => {
  const fetchKeyList = keyListFetcher(LOOPBACK_OUTBOUND);
  let server: Server;
  let base = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      switch (req.url) {
        case "/ok":
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(listOf(merchantKey)));
          return;
        case "/missing":
          res.writeHead(404).end("{}");
          return;
        case "/redirect":
          res.writeHead(302, { location: "/ok" }).end();
          return;
        case "/huge":
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ keys: [], pad: "x".repeat(MAX_KEY_LIST_BYTES) }));
          return;
        case "/not-json":
          res.writeHead(200).end("<html>");
          return;
        case "/slow":
          setTimeout(() => res.writeHead(200).end(JSON.stringify(listOf(merchantKey))), 2000).unref();
          return;
        default:
          res.writeHead(500).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("answers the parsed list of a 200", async () => {
    expect(publishedKeyIds(await fetchKeyList(`${base}/ok`, 2000))).toEqual(new Set([keyId(merchantKey.publicJwk)]));
  });

  it("refuses any other status, a redirect, an oversized body, a body that is not JSON, and a slow answer", async () => {
    for (const path of ["/missing", "/redirect", "/huge", "/not-json"]) await expect(fetchKeyList(`${base}${path}`, 2000), path).rejects.toThrow();
    const t = performance.now();
    await expect(fetchKeyList(`${base}/slow`, 100)).rejects.toThrow();
    expect(performance.now() - t).toBeLessThan(1500);
  });
});
