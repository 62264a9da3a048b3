/**
 * The admission review on the signed samples: what passes (valid objects, DELETE, an object
 * being deleted, a metadata-only update, other groups), what is refused and how the message
 * reads (reason codes, spec paths), the immutable ids, a silent extension of a stored grant
 * only when the old generation was stored, the screen phase (private key members only), and the
 * warning for a revoked id (for the namespace's organization only, by the lookup). Plus the
 * server's parsing of an AdmissionReview and the shape of its answer.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_NAMES, buildSamples, type Manifest } from "../../../../src/core/samples/index.js";
import { reviewAdmission, type AdmissionRequest } from "../../../../src/controller/admission/review.js";
import { parseReview, reviewResponse } from "../../../../src/controller/admission/server.js";
import { generateSigner } from "../../../../src/core/jose/index.js";
import { openPaymentMandateClaims, presentMandate } from "../../../helpers/ap2-mandates.js";

const AT = "2026-11-20T09:00:00Z";
const NOW = Date.parse("2026-11-23T10:30:00Z");
let byName: Record<string, Manifest>;

beforeAll(async () => {
  byName = Object.fromEntries((await buildSamples(AT)).map((s) => [s.manifest.metadata.name, s.manifest]));
});

type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown>; status?: Record<string, unknown> };
const object = (name: string): Obj => ({ ...(structuredClone(byName[name]) as unknown as Obj), metadata: { name, namespace: "acme", generation: 1 } });

function request(obj: Obj, operation = "CREATE", oldObject?: Obj): AdmissionRequest {
  return {
    uid: "u-1",
    kind: { group: "writ.dev", version: "v1alpha1", kind: obj.kind },
    operation,
    namespace: "acme",
    name: obj.metadata.name as string,
    object: obj,
    ...(oldObject ? { oldObject } : {}),
  };
}
const review = (req: AdmissionRequest, phase: "validate" | "screen" = "validate") => reviewAdmission(req, { now: NOW, phase });

describe("reviewAdmission", () => {
  it("admits the samples, DELETE, objects being deleted, metadata-only updates and other groups", async () => {
    for (const n of Object.values(SAMPLE_NAMES)) expect(await review(request(object(n)))).toEqual({ allowed: true });
    const bad = object(SAMPLE_NAMES.delegation);
    bad.spec.expires_at = "2000-01-01T00:00:00Z";
    expect(await review(request(bad, "DELETE"))).toEqual({ allowed: true });
    expect(await review(request({ ...bad, metadata: { ...bad.metadata, deletionTimestamp: "2026-11-23T10:00:00Z" } }, "UPDATE", bad))).toEqual({
      allowed: true,
    });
    expect(await review(request({ ...bad, metadata: { ...bad.metadata, labels: { a: "b" } } }, "UPDATE", bad))).toEqual({ allowed: true });
    expect(await review({ ...request(bad), kind: { group: "apps", version: "v1", kind: "Deployment" } })).toEqual({ allowed: true });
  });

  it("refuses repointing the record-id annotation (a metadata-only update), also on an object being deleted; allows setting it once", async () => {
    const annotated = (o: Obj, id?: string): Obj => ({ ...o, metadata: { ...o.metadata, annotations: id === undefined ? {} : { "writ.dev/record-id": id } } });
    const d = object(SAMPLE_NAMES.delegation);
    const mine = annotated(d, String(d.spec.delegation_id));
    const repointed = annotated(d, "del_of_another_namespace");
    for (const phase of ["validate", "screen"] as const) {
      const v = await review(request(repointed, "UPDATE", mine), phase);
      expect(v.allowed).toBe(false);
      expect(v.message).toBe(
        `Delegation acme/acme-procurement is refused: the annotation writ.dev/record-id names the record this resource stored (${String(d.spec.delegation_id)}) and cannot be changed (to del_of_another_namespace); a new record is a new resource`,
      );
    }
    const deleting = { ...repointed, metadata: { ...repointed.metadata, deletionTimestamp: "2026-11-23T10:00:00Z" } };
    expect((await review(request(deleting, "UPDATE", mine))).allowed).toBe(false);
    expect((await review(request(annotated(d), "UPDATE", mine))).message).toMatch(/cannot be removed/);
    // The controller's first write of it (a resource stored before the webhook existed), and an unchanged one.
    expect(await review(request(mine, "UPDATE", annotated(d)))).toEqual({ allowed: true });
    expect(await review(request({ ...mine, metadata: { ...mine.metadata, labels: { a: "b" } } }, "UPDATE", mine))).toEqual({ allowed: true });
    // A new Subscription may not declare it; an agreement's is checked like a delegation's.
    expect((await review(request(annotated(object(SAMPLE_NAMES.subscription), "sub_0123456789abcdef01234567")))).allowed).toBe(false);
    const a = object(SAMPLE_NAMES.agreement);
    expect((await review(request(annotated(a, "agr_other"), "UPDATE", annotated(a, String(a.spec.agreement_id))))).allowed).toBe(false);
  });

  it("refuses expires_at before granted_at with a message naming both fields", async () => {
    const d = object(SAMPLE_NAMES.delegation);
    d.spec.expires_at = "2026-11-19T09:00:00Z";
    const v = await review(request(d));
    expect(v.allowed).toBe(false);
    expect(v.message).toBe(
      "Delegation acme/acme-procurement is refused: SPEC_INVALID: spec.expires_at (2026-11-19T09:00:00Z) must be after spec.granted_at (2026-11-20T09:00:00Z): this grant would end before it starts",
    );
  });

  it("refuses private key members in both phases, naming the path; the screen phase checks nothing else", async () => {
    const d = object(SAMPLE_NAMES.agreement);
    const mandate = (d.spec.mandates as { principal: { public_key: Record<string, string> } }[])[1]!;
    mandate.principal.public_key.d = "secret";
    for (const phase of ["validate", "screen"] as const) {
      const v = await review(request(d), phase);
      expect(v.message).toContain('SPEC_INVALID: spec.mandates[1].principal.public_key: a public key must not carry its private member "d"');
    }
    const late = object(SAMPLE_NAMES.delegation);
    late.spec.expires_at = "2000-01-01T00:00:00Z";
    expect((await review(request(late), "screen")).allowed).toBe(true);
  });

  it("defaults the finalizer and the record-id annotation on CREATE in the screen phase, and only what is missing", async () => {
    const d = object(SAMPLE_NAMES.delegation);
    expect(await review(request(d), "screen")).toEqual({
      allowed: true,
      patch: [
        { op: "add", path: "/metadata/finalizers", value: ["writ.dev/revoke"] },
        { op: "add", path: "/metadata/annotations", value: { "writ.dev/record-id": "del_acme_procurement" } },
      ],
    });
    d.metadata.finalizers = ["example.com/other"];
    d.metadata.annotations = { team: "a" };
    expect((await review(request(d), "screen")).patch).toEqual([
      { op: "add", path: "/metadata/finalizers/-", value: "writ.dev/revoke" },
      { op: "add", path: "/metadata/annotations/writ.dev~1record-id", value: "del_acme_procurement" },
    ]);
    d.metadata.finalizers = ["writ.dev/revoke"];
    d.metadata.annotations = { "writ.dev/record-id": "del_acme_procurement" };
    expect(await review(request(d), "screen")).toEqual({ allowed: true });
    // A Subscription's record id is made by the store: the finalizer only. No patch on UPDATE.
    expect((await review(request(object(SAMPLE_NAMES.subscription)), "screen")).patch).toEqual([
      { op: "add", path: "/metadata/finalizers", value: ["writ.dev/revoke"] },
    ]);
    const a = object(SAMPLE_NAMES.agreement);
    const b = object(SAMPLE_NAMES.agreement);
    b.spec.updated_at = "2026-11-21T09:00:00Z";
    expect(await review(request(b, "UPDATE", a), "screen")).toEqual({ allowed: true });
  });

  it("refuses a tampered mandate (SIGNATURE_INVALID) and a widening chain (CHAIN_SCOPE_WIDENED)", async () => {
    const a = object(SAMPLE_NAMES.agreement);
    (a.spec.mandates as { purpose: string }[])[0]!.purpose = "anything";
    expect((await review(request(a))).message).toContain("SIGNATURE_INVALID: spec.mandates[0] (intent int_office_supplies): the signature does not verify");
    const c = object(SAMPLE_NAMES.chainedDelegation);
    (c.spec.scope as Record<string, unknown>).maximum_amount = 900;
    expect((await review(request(c))).message).toMatch(/CHAIN_SCOPE_WIDENED: .*maximum_amount/);
  });

  it("refuses a changed id, by the old object and by the record-id annotation", async () => {
    const old = object(SAMPLE_NAMES.delegation);
    const changed = object(SAMPLE_NAMES.delegation);
    changed.spec.delegation_id = "del_new";
    expect((await review(request(changed, "UPDATE", old))).message).toContain(
      "spec.delegation_id is immutable: this resource declared del_acme_procurement; a new grant (del_new)",
    );
    const annotated = { ...changed, metadata: { ...changed.metadata, annotations: { "writ.dev/record-id": "del_acme_procurement" } } };
    expect((await review(request(annotated))).allowed).toBe(false);
    const a = object(SAMPLE_NAMES.agreement);
    const b = object(SAMPLE_NAMES.agreement);
    b.spec.agreement_id = "agr_new";
    expect((await review(request(b, "UPDATE", a))).message).toContain("spec.agreement_id is immutable");
  });

  it("refuses a silent extension only of a generation that was stored", async () => {
    const old = object(SAMPLE_NAMES.delegation);
    const later = object(SAMPLE_NAMES.delegation);
    later.spec.expires_at = "2026-12-27T09:00:00Z";
    expect(await review(request(later, "UPDATE", old))).toEqual({ allowed: true });
    old.status = { observedGeneration: 1, conditions: [{ type: "Stored", status: "True", reason: "Stored", message: "" }] };
    expect((await review(request(later, "UPDATE", old))).message).toContain("refused as a silent extension of the stored grant: expires_at moves later");
    const revived = object(SAMPLE_NAMES.delegation);
    old.spec.state = "revoked";
    expect((await review(request(revived, "UPDATE", old))).message).toContain("status moves from revoked to active");
  });

  it("checks a Delegation in the mandate form by its own shape: admitted, its derived record id defaulted, another mandate refused", async () => {
    const wallet = generateSigner("ES256");
    const agent = generateSigner("EdDSA");
    const nowSec = Math.floor(NOW / 1000);
    const present = async (nonce: string) =>
      presentMandate({
        issuer: wallet,
        holder: agent,
        audience: "writ",
        nonce,
        kbIatSec: nowSec,
        claims: openPaymentMandateClaims(agent, { iatSec: nowSec - 60, expSec: nowSec + 3600 }),
      });
    const mandated = (spec: Record<string, unknown>): Obj => ({
      apiVersion: "writ.dev/v1alpha1",
      kind: "Delegation",
      metadata: { name: "shoes", namespace: "acme", generation: 1 },
      spec,
    });
    const m = mandated({ mandate: { sdJwt: await present("n-1") }, agent: { agent_id: "agent_shoes" } });
    expect(await review(request(m))).toEqual({ allowed: true });
    const id = (await review(request(m), "screen")).patch?.find((op) => op.path === "/metadata/annotations")?.value as Record<string, string>;
    expect(id["writ.dev/record-id"]).toMatch(/^ap2-[0-9a-f]{32}$/);

    const shapeless = await review(request(mandated({ mandate: { sdJwt: await present("n-1") }, agent: { agent_id: "agent_shoes" }, scope: {} })));
    expect(shapeless.message).toContain("SPEC_INVALID: spec.scope: the mandate form holds only mandate, agent and state");
    expect((await review(request(mandated({ mandate: { sdJwt: "not-an-sd-jwt" }, agent: { agent_id: "agent_shoes" } })))).message).toContain(
      "spec.mandate.sdJwt:",
    );

    const other = mandated({ mandate: { sdJwt: await present("n-2") }, agent: { agent_id: "agent_shoes" } });
    expect((await review(request(other, "UPDATE", m))).message).toContain(`spec.mandate is immutable: this resource recorded ${id["writ.dev/record-id"]}`);
    // The grant form cannot take over a resource that recorded a mandate, nor the reverse.
    const grant = { ...object(SAMPLE_NAMES.delegation), metadata: { name: "shoes", namespace: "acme", generation: 2, annotations: id } };
    expect((await review(request(grant, "UPDATE", m))).message).toContain("spec.delegation_id is immutable");
    expect(
      (
        await review(
          request(
            { ...m, metadata: { ...m.metadata, annotations: { "writ.dev/record-id": "del_acme_procurement" } } },
            "UPDATE",
            object(SAMPLE_NAMES.delegation),
          ),
        )
      ).message,
    ).toContain("spec.mandate is immutable: this resource recorded del_acme_procurement");
  });

  it("lists at most eight refusals and says how many more", async () => {
    const d = object(SAMPLE_NAMES.delegation);
    d.spec.conditions = Array.from({ length: 10 }, () => ({ type: "time_window", start: "25:00", end: "26:00", timezone: "Mars/Olympus" }));
    const v = await review(request(d));
    expect(v.allowed).toBe(false);
    expect(v.message).toMatch(/\(and \d+ more\)$/);
  });

  it("warns, on CREATE, that an id revoked for the namespace's organization stays revoked", async () => {
    const seen: string[] = [];
    const lookup = {
      revoked: async (kind: "delegation" | "agreement", id: string, namespace: string) => {
        seen.push(`${kind}:${id}:${namespace}`);
        return { revokedAt: new Date("2026-11-22T08:00:00Z"), reason: "the Delegation acme/acme-procurement was deleted" };
      },
    };
    const v = await reviewAdmission(request(object(SAMPLE_NAMES.delegation)), { now: NOW, phase: "validate", lookup });
    expect(v).toEqual({
      allowed: true,
      warnings: [
        "spec.delegation_id del_acme_procurement was revoked at 2026-11-22T08:00:00.000Z (the Delegation acme/acme-procurement was deleted); revocation is final, so this resource will stay revoked: a new grant needs a new delegation_id",
      ],
    });
    expect(seen).toEqual(["delegation:del_acme_procurement:acme"]);
    const failing = { revoked: () => Promise.reject(new Error("db down")) };
    expect(await reviewAdmission(request(object(SAMPLE_NAMES.agreement)), { now: NOW, phase: "validate", lookup: failing })).toEqual({ allowed: true });
  });
});

describe("the AdmissionReview wire format", () => {
  it("parses a v1 review and refuses anything else", () => {
    const body = {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid: "x", operation: "CREATE", kind: { group: "writ.dev", version: "v1alpha1", kind: "Delegation" } },
    };
    expect(parseReview(JSON.stringify(body))?.uid).toBe("x");
    expect(parseReview(JSON.stringify({ ...body, apiVersion: "admission.k8s.io/v1beta1" }))).toBeUndefined();
    expect(parseReview("{")).toBeUndefined();
    expect(parseReview(JSON.stringify({ ...body, request: { uid: 1 } }))).toBeUndefined();
  });

  it("answers with the uid, a 422 Invalid status when refused, and warnings", () => {
    expect(reviewResponse("x", { allowed: false, message: "no" })).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "x", allowed: false, status: { code: 422, reason: "Invalid", message: "no" } },
    });
    expect(reviewResponse("y", { allowed: true, warnings: ["w"] })).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "y", allowed: true, warnings: ["w"] },
    });
    const patched = reviewResponse("z", { allowed: true, patch: [{ op: "add", path: "/metadata/finalizers", value: ["writ.dev/revoke"] }] }).response as Record<
      string,
      string
    >;
    expect(patched.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(patched.patch ?? "", "base64").toString("utf8"))).toEqual([
      { op: "add", path: "/metadata/finalizers", value: ["writ.dev/revoke"] },
    ]);
  });
});
