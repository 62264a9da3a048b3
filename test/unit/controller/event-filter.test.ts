import { describe, expect, it } from "vitest";
import { shouldEnqueue } from "../../../src/controller/event-filter.js";

const obj = (generation: number, extra: Record<string, unknown> = {}) => ({ metadata: { name: "x", namespace: "n", generation, resourceVersion: String(generation), ...extra } });

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
