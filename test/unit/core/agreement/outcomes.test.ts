import { describe, expect, it } from "vitest";
import { NEXT_OUTCOMES, outcomeStep } from "../../../../src/core/agreement/index.js";

describe("outcomeStep", () => {
  it("allows allowed -> authorized -> settled and allowed|authorized -> failed", () => {
    expect(outcomeStep(["allowed"], "authorized")).toEqual({ kind: "append" });
    expect(outcomeStep(["allowed"], "failed")).toEqual({ kind: "append" });
    expect(outcomeStep(["allowed", "authorized"], "settled")).toEqual({ kind: "append" });
    expect(outcomeStep(["allowed", "authorized"], "failed")).toEqual({ kind: "append" });
  });

  it("refuses every other move, naming the current outcome", () => {
    expect(outcomeStep(["allowed"], "settled")).toEqual({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: "allowed" });
    expect(outcomeStep(["allowed", "failed"], "settled")).toEqual({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: "failed" });
    expect(outcomeStep(["allowed", "failed"], "authorized")).toEqual({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: "failed" });
    expect(outcomeStep(["allowed", "authorized", "settled"], "failed")).toEqual({ kind: "refused", code: "OUTCOME_NOT_ALLOWED", current: "settled" });
  });

  it("replays an outcome the action already has, and refuses actions never allowed", () => {
    expect(outcomeStep(["allowed", "authorized", "settled"], "authorized")).toEqual({ kind: "replay" });
    expect(outcomeStep(["allowed", "failed"], "failed")).toEqual({ kind: "replay" });
    expect(outcomeStep([], "authorized")).toEqual({ kind: "refused", code: "ACTION_NOT_RECORDED" });
  });

  it("makes settled and failed final", () => {
    expect(NEXT_OUTCOMES.settled).toEqual([]);
    expect(NEXT_OUTCOMES.failed).toEqual([]);
  });
});
