/**
 * What a watched resource revokes: deletion through the finalizer (the record-id annotation),
 * `spec.state: revoked` (not when the annotation names another id), a status phase Revoked; not
 * suspension or expiry. And when it changed: the revoked-at annotation, else the API server's
 * one-second times taken as the middle of their second.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/sources/kubernetes/objects.js";
import { revocationOf } from "../../../src/verify/revocation/kube-revocations.js";

function delegation(spec: Record<string, unknown>, meta: Partial<KubeObject["metadata"]> = {}, status?: Record<string, unknown>): KubeObject {
  return { metadata: { name: "d", namespace: "ns", ...meta }, spec: { delegation_id: "del_1", ...spec }, ...(status ? { status } : {}) };
}
const stored = { finalizers: ["writ.dev/revoke"], annotations: { "writ.dev/record-id": "del_1" } };

describe("revocationOf", () => {
  it("revokes on spec.state revoked, with the managed-fields time as the change", () => {
    const o = delegation({ state: "revoked" }, { managedFields: [{ time: "2026-11-21T10:00:00Z" }, { time: "2026-11-21T10:00:07Z" }, { time: "bogus" }] });
    expect(revocationOf("delegation", o)).toEqual({
      kind: "delegation",
      id: "del_1",
      trigger: "state",
      changedAtMs: Date.parse("2026-11-21T10:00:07.500Z"),
      precise: false,
    });
  });

  it("prefers the writ.dev/revoked-at annotation (milliseconds)", () => {
    const o = delegation(
      { state: "revoked" },
      { annotations: { "writ.dev/revoked-at": "2026-11-21T10:00:00.123Z" }, managedFields: [{ time: "2026-11-21T10:00:09Z" }] },
    );
    expect(revocationOf("delegation", o)).toMatchObject({ changedAtMs: Date.parse("2026-11-21T10:00:00.123Z"), precise: true });
    expect(revocationOf("delegation", delegation({ state: "revoked" }, { annotations: { "writ.dev/revoked-at": "yesterday" } }))).toMatchObject({
      precise: false,
    });
  });

  it("revokes the record-id of a resource being deleted through the finalizer", () => {
    const o = delegation({ state: "active" }, { ...stored, deletionTimestamp: "2026-11-21T10:00:01Z" });
    expect(revocationOf("delegation", o)).toEqual({
      kind: "delegation",
      id: "del_1",
      trigger: "deletion",
      changedAtMs: Date.parse("2026-11-21T10:00:01.500Z"),
      precise: false,
    });
    // Without the finalizer, or without a record id, nothing was stored to revoke.
    expect(revocationOf("delegation", delegation({}, { deletionTimestamp: "2026-11-21T10:00:01Z" }))).toBeUndefined();
    expect(revocationOf("delegation", delegation({}, { finalizers: ["writ.dev/revoke"], deletionTimestamp: "2026-11-21T10:00:01Z" }))).toBeUndefined();
  });

  it("does not take a state for another id than the one the resource stored", () => {
    expect(revocationOf("delegation", delegation({ state: "revoked", delegation_id: "del_other" }, stored))).toBeUndefined();
  });

  it("revokes on a status phase Revoked, timed by status.revokedAt", () => {
    const o = delegation({ state: "active" }, stored, { phase: "Revoked", revokedAt: "2026-11-21T10:00:00.250Z" });
    expect(revocationOf("delegation", o)).toEqual({
      kind: "delegation",
      id: "del_1",
      trigger: "status",
      changedAtMs: Date.parse("2026-11-21T10:00:00.250Z"),
      precise: true,
    });
  });

  it("reads an IntentAgreement's agreement_id", () => {
    const o: KubeObject = { metadata: { name: "a", namespace: "ns" }, spec: { agreement_id: "agr_1", state: "revoked", delegationRef: { name: "d" } } };
    expect(revocationOf("agreement", o)).toMatchObject({ kind: "agreement", id: "agr_1", trigger: "state" });
  });

  it("ignores suspension, expiry, active grants and unusable ids", () => {
    expect(revocationOf("delegation", delegation({ state: "suspended" }))).toBeUndefined();
    expect(revocationOf("delegation", delegation({ state: "expired" }))).toBeUndefined();
    expect(revocationOf("delegation", delegation({ state: "active", expires_at: "2000-01-01T00:00:00Z" }))).toBeUndefined();
    expect(revocationOf("delegation", delegation({ state: "revoked", delegation_id: 7 }))).toBeUndefined();
    expect(revocationOf("delegation", delegation({ state: "revoked", delegation_id: "x".repeat(300) }))).toBeUndefined();
    expect(revocationOf("delegation", { metadata: { name: "d" }, spec: "nonsense" })).toBeUndefined();
  });
});
