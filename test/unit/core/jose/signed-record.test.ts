/**
 * Every signed record kind goes through `verifySignedRecord`: for each kind, through that
 * kind's own verifier, a signature over non-canonical bytes (whitespace, reordered members,
 * `1.0` for `1`) is refused although the key and typ are right; so are a wrong typ, alg none,
 * and a key with a private member `d`.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  buildSignedAgreement,
  mandateHash,
  verifyAcknowledgement,
  verifyMandate,
  verifyRevocation,
  verifyRevocationPush,
  type Mandate,
} from "../../../../src/core/agreement/index.js";
import { alertPayload, verifyAlert } from "../../../../src/core/alerts/alert.js";
import { canonicalJson } from "../../../../src/core/canonical/index.js";
import {
  JoseError,
  generateSigner,
  inspectSignedRecord,
  keyId,
  privateJwk,
  signJws,
  signRecord,
  verifySignedRecord,
  type JwsObject,
  type Signer,
} from "../../../../src/core/jose/index.js";
import { verifyTreeHead } from "../../../../src/core/tlog/index.js";
import { verifyDelegationRevocation } from "../../../../src/core/delegation/signed-revocation.js";

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
const AT = "2026-06-01T10:00:00Z";
const HASH = `sha256:${"ab".repeat(32)}`;

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
    return "OK";
  } catch (e) {
    if (e instanceof JoseError) return e.code;
    throw e;
  }
}

/** Members in reverse order at every level (JCS sorts them). */
function reordered(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reordered);
  if (typeof v === "object" && v !== null)
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, reordered(x)]),
    );
  return v;
}

/** Non-canonical spellings of the same JSON value. */
const VARIANTS: ReadonlyArray<[string, (canonical: string) => string]> = [
  ["whitespace", (c) => JSON.stringify(JSON.parse(c), null, 2)],
  ["reordered members", (c) => JSON.stringify(reordered(JSON.parse(c)))],
  [
    "1.0 for 1",
    (c) => {
      const out = c.replace(/:(\d+)([,}])/, ":$1.0$2");
      expect(out).not.toBe(c);
      return out;
    },
  ],
];

/** One kind of signed record and its verifier. */
interface Kind {
  name: string;
  typ: string;
  /** The record without signature; `key` where the record carries its own key. */
  unsigned(key: object): Record<string, unknown>;
  /** Whether the kind's verifier accepts the record with `signature`, trusting `key`. */
  accepts(unsigned: Record<string, unknown>, signature: JwsObject, key: object): Promise<boolean>;
}

const ok = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );
const signer: Signer = generateSigner();
let revoked: { agreement_id: string; mandates: Mandate[] };

function withKey(m: Mandate, key: object): Mandate {
  return { ...m, principal: { ...m.principal, public_key: key as Mandate["principal"]["public_key"] } };
}

const KINDS: Kind[] = [
  {
    name: "mandate",
    typ: "svc-mandate+jws",
    unsigned: (key) => ({
      intent_id: "i1",
      principal: { type: "human", id: "prn_1", public_key: key },
      agent: { agent_id: "a1" },
      currency: "EUR",
      maximum_amount: 20,
      algorithm: "EdDSA",
      rendering: "r",
    }),
    accepts: async (u, signature) => (await verifyMandate({ ...(u as unknown as Mandate), signature })) === "valid",
  },
  {
    name: "acknowledgement",
    typ: "svc-ack+jws",
    unsigned: (key) => ({ svc_ack: 1, agreement_id: "agr-1", mandate_hash: HASH, role: "merchant", id: "org_1", at: AT, public_key: key }),
    accepts: (u, signature) => verifyAcknowledgement({ ...(u as object), signature } as never),
  },
  {
    name: "agreement revocation (also a push's inner revocation)",
    typ: "svc-revocation+jws",
    unsigned: (key) => ({
      svc_revocation: 1,
      agreement_id: revoked.agreement_id,
      mandate_hash: mandateHash(withKey(revoked.mandates[0] as Mandate, key)),
      at: AT,
      reason: "lost",
    }),
    accepts: async (u, signature, key) =>
      (await verifyRevocation({
        agreement_id: revoked.agreement_id,
        mandates: [withKey(revoked.mandates[0] as Mandate, key)],
        revocation: { ...(u as object), signature } as never,
      })) === "valid",
  },
  {
    name: "delegation revocation",
    typ: "svc-delegation-revocation+jws",
    unsigned: () => ({ svc_delegation_revocation: 1, delegation_id: "del-1", at: AT, reason: "lost" }),
    accepts: async (_u, signature, key) => (await verifyDelegationRevocation(signature, "del-1", key)).ok,
  },
  {
    name: "revocation push (outer)",
    typ: "svc-revocation-push+jws",
    unsigned: () => ({ at: AT, svc_revocation_push: "1", revocation: { svc_revocation: 1, agreement_id: "agr-1", mandate_hash: HASH, at: AT, reason: "x" } }),
    accepts: (u, signature, key) => ok(verifyRevocationPush({ ...u, signature }, key)),
  },
  {
    name: "tree head",
    typ: "svc-tree-head+jws",
    unsigned: () => ({ algorithm: "EdDSA", at: AT, svc_tree_head: 1, root: HASH, tree_size: 3 }),
    accepts: (u, signature, key) => ok(verifyTreeHead({ ...u, signature }, key as never)),
  },
  {
    name: "subscriber alert",
    typ: "svc-bureau-alert+jws",
    unsigned: () => ({ ...alertPayload("sub_1", { event_id: "evt_1", type: "incident", agent_id: "a1", at: AT, details: { n: 1 } }) }),
    accepts: (u, signature, key) => ok(verifyAlert({ ...u, signature }, key)),
  },
];

beforeAll(async () => {
  const a = await buildSignedAgreement(
    {
      agreement_id: "agr-rev",
      at: AT,
      mandates: [{ intent_id: "i1", principal: { type: "human", id: "prn_1" }, agent: { agent_id: "a1" }, currency: "EUR", maximum_amount: 20 }],
    },
    signer,
  );
  revoked = { agreement_id: a.agreement_id, mandates: a.mandates };
});

describe.each(KINDS)("$name", (kind) => {
  const pub = () => signer.publicJwk;

  it("accepts a signature over exactly its canonical bytes", async () => {
    const u = kind.unsigned(pub());
    expect(await kind.accepts(u, await signRecord(u, signer, kind.typ), pub())).toBe(true);
  });

  it.each(VARIANTS)("refuses a signature over non-canonical bytes: %s", async (_name, spell) => {
    const u = kind.unsigned(pub());
    const text = spell(canonicalJson(u));
    expect(JSON.parse(text)).toEqual(JSON.parse(canonicalJson(u))); // the same value, spelled otherwise
    const signature = await signJws(text, signer, kind.typ);
    expect(await kind.accepts(u, signature, pub())).toBe(false);
    expect(await codeOf(() => inspectSignedRecord(signature, { typ: kind.typ }))).toBe("JWS_PAYLOAD_NOT_CANONICAL");
  });

  it("refuses a wrong typ and a missing typ", async () => {
    const u = kind.unsigned(pub());
    expect(await kind.accepts(u, await signRecord(u, signer, "svc-other+jws"), pub())).toBe(false);
    expect(await kind.accepts(u, await signJws(canonicalJson(u), signer), pub())).toBe(false);
  });

  it("refuses alg none", async () => {
    const u = kind.unsigned(pub());
    const none = { protected: b64({ alg: "none", typ: kind.typ, kid: signer.kid }), payload: b64(canonicalJson(u)), signature: "" };
    expect(await kind.accepts(u, none, pub())).toBe(false);
    expect(await codeOf(verifySignedRecord(none, pub(), { typ: kind.typ, record: u }))).toBe("JWS_ALG_NOT_ALLOWED");
  });

  it("refuses a key that carries the private member d", async () => {
    const secret = privateJwk(signer);
    const u = kind.unsigned(secret);
    expect(await kind.accepts(u, await signRecord(u, signer, kind.typ), secret)).toBe(false);
  });
});

describe("verifySignedRecord", () => {
  const other = generateSigner("ES256");
  const record = { svc_x: 1, name: "é", list: [1, 2] };

  it("returns the parsed payload and the key that verified, choosing the key by kid among several", async () => {
    const jws = await signRecord(record, other, "t");
    const v = await verifySignedRecord(jws, [signer.publicJwk, other.publicJwk], { typ: "t" });
    expect(v.payload).toEqual(record);
    expect(keyId(v.key)).toBe(other.kid);
    expect(v.header).toMatchObject({ alg: "ES256", kid: other.kid, typ: "t" });
  });

  it("refuses a kid naming none of the keys, and a payload other than the record held", async () => {
    const jws = await signRecord(record, other, "t");
    expect(await codeOf(verifySignedRecord(jws, signer.publicJwk, { typ: "t" }))).toBe("JWS_KID_MISMATCH");
    expect(await codeOf(verifySignedRecord(jws, other.publicJwk, { typ: "t", record: { ...record, svc_x: 2 } }))).toBe("JWS_PAYLOAD_MISMATCH");
  });

  it("refuses payloads that are not canonical JSON objects", async () => {
    for (const text of ['{"a":1,"a":1}', "[1]", "not json", '{"a":"\\ud800"}', '{"a":1e2}']) {
      const jws = await signJws(text, signer, "t");
      expect(await codeOf(verifySignedRecord(jws, signer.publicJwk, { typ: "t" })), text).toBe("JWS_PAYLOAD_NOT_CANONICAL");
    }
  });

  it("refuses a private JWK as the verifying key before any cryptography", async () => {
    const jws = await signRecord(record, signer, "t");
    expect(await codeOf(verifySignedRecord(jws, privateJwk(signer), { typ: "t" }))).toBe("JWK_PRIVATE");
  });
});
