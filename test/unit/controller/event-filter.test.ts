import { describe, expect, it } from "vitest";
import { shouldEnqueue } from "../../../src/controller/event-filter.js";
import { StatusMemo } from "../../../src/controller/status-memo.js";

const obj = (generation: number, extra: Record<string, unknown> = {}) => ({
  metadata: { name: "x", namespace: "n", generation, resourceVersion: String(generation), ...extra },
});

describe("shouldEnqueue", () => {
  it("queues adds, deletes and resyncs", () => {
    for (const t of ["added", "deleted", "resync"] as const) expect(shouldEnqueue(t, obj(1))).toBe(true);
  });
  it("queues an update of the spec (new generation) or of the deletion, not of status or metadata", () => {
    expect(shouldEnqueue("modified", obj(2), obj(1))).toBe(true);
    expect(shouldEnqueue("modified", obj(1, { deletionTimestamp: "2026-01-01T00:00:00Z" }), obj(1))).toBe(true);
    expect(shouldEnqueue("modified", obj(1, { finalizers: ["writ.dev/revoke"] }), obj(1))).toBe(false);
    expect(shouldEnqueue("modified", obj(1))).toBe(true);
  });
});

describe("shouldEnqueue with the status memo", () => {
  const withStatus = (status: unknown) => ({ metadata: { name: "x", namespace: "n", uid: "u1", generation: 1 }, status });
  it("ignores the controller's own status writes and queues anyone else's", () => {
    const memo = new StatusMemo();
    const ours = { phase: "Active", conditions: [{ type: "Ready", status: "True" }] };
    memo.remember("u1", ours);
    // Key order does not matter (canonical JSON).
    expect(shouldEnqueue("modified", withStatus({ conditions: [{ status: "True", type: "Ready" }], phase: "Active" }), withStatus(undefined), memo)).toBe(
      false,
    );
    expect(shouldEnqueue("modified", withStatus({ phase: "Revoked" }), withStatus(ours), memo)).toBe(true);
    // A metadata-only change (same status) queues nothing even when the status is foreign.
    expect(shouldEnqueue("modified", withStatus({ phase: "Revoked" }), withStatus({ phase: "Revoked" }), memo)).toBe(false);
    memo.forget("u1");
    expect(memo.size).toBe(0);
    expect(shouldEnqueue("modified", withStatus(ours), withStatus(undefined), memo)).toBe(true);
  });
});
