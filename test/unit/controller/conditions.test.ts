import { describe, expect, it } from "vitest";
import { conditionTime, findCondition, mergeConditions, statusUnchanged, MAX_CONDITION_MESSAGE } from "../../../src/controller/conditions.js";

const T0 = Date.parse("2026-11-21T06:00:00.250Z");
const T1 = Date.parse("2026-11-21T07:00:00Z");

describe("mergeConditions", () => {
  const first = mergeConditions(undefined, [{ type: "Ready", status: "False", reason: "SPEC_INVALID", message: "bad" }], 1, T0);

  it("stamps a new condition with now (second precision) and the generation", () => {
    expect(first).toEqual([
      { type: "Ready", status: "False", reason: "SPEC_INVALID", message: "bad", lastTransitionTime: "2026-11-21T06:00:00Z", observedGeneration: 1 },
    ]);
  });

  it("keeps lastTransitionTime while the status stays, whatever the reason or message", () => {
    const same = mergeConditions(first, [{ type: "Ready", status: "False", reason: "CHAIN_BROKEN", message: "other" }], 2, T1);
    expect(same[0]).toMatchObject({ reason: "CHAIN_BROKEN", lastTransitionTime: "2026-11-21T06:00:00Z", observedGeneration: 2 });
  });

  it("moves lastTransitionTime when the status changes", () => {
    const flipped = mergeConditions(first, [{ type: "Ready", status: "True", reason: "Reconciled", message: "ok" }], 2, T1);
    expect(flipped[0]?.lastTransitionTime).toBe(conditionTime(T1));
  });

  it("writes exactly the desired types, in order, and cuts long messages to the CRD's limit", () => {
    const out = mergeConditions(
      [{ type: "Stale", status: "True", lastTransitionTime: "x" }],
      [
        { type: "Valid", status: "True", reason: "Validated", message: "x".repeat(MAX_CONDITION_MESSAGE + 10) },
        { type: "Ready", status: "True", reason: "Reconciled", message: "" },
      ],
      3,
      T0,
    );
    expect(out.map((c) => c.type)).toEqual(["Valid", "Ready"]);
    expect(out[0]?.message).toHaveLength(MAX_CONDITION_MESSAGE);
  });

  it("finds a condition in a status", () => {
    expect(findCondition({ conditions: first }, "Ready")?.reason).toBe("SPEC_INVALID");
    expect(findCondition({}, "Ready")).toBeUndefined();
  });
});

describe("statusUnchanged", () => {
  it("compares canonically, key order aside", () => {
    expect(statusUnchanged({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(statusUnchanged({ a: 1 }, { a: 2 })).toBe(false);
    expect(statusUnchanged({ a: 1 }, { a: 1, b: 1 })).toBe(false);
    expect(statusUnchanged(undefined, { a: 1 })).toBe(false);
  });
});
