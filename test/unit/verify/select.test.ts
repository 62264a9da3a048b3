import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { VerifyCandidate } from "../../../src/verify/caches/candidates.js";
import { selectCandidate } from "../../../src/verify/pipeline/select.js";

/** A candidate with only what selection reads: its id, organization and intent ids. */
function cand(agreementId: string, orgId: string | null, intents: string[] = ["i1"]): VerifyCandidate {
  return {
    agreementId,
    revision: 1,
    orgId,
    agreement: { agreement: { agreement_id: agreementId }, mandates: intents.map((intent_id) => ({ mandate: { intent_id } })) },
    row: {},
  } as unknown as VerifyCandidate;
}

const ORG = "org-a";

describe("selectCandidate: tenancy", () => {
  it("ignores another organization's agreements but counts agreements stored without one", () => {
    const mine = cand("agr-1", ORG);
    const theirs = cand("agr-2", "org-b");
    const unowned = cand("agr-3", null);
    expect(selectCandidate([theirs], ORG, {})).toEqual({ kind: "none" });
    expect(selectCandidate([mine, theirs], ORG, {})).toEqual({ kind: "one", candidate: mine });
    expect(selectCandidate([theirs, unowned], ORG, {})).toEqual({ kind: "one", candidate: unowned });
    expect(selectCandidate([mine, theirs, unowned], ORG, {})).toEqual({ kind: "ambiguous", agreementIds: ["agr-1", "agr-3"] });
  });

  it("never picks another organization's agreement by id", () => {
    const theirs = cand("agr-2", "org-b");
    expect(selectCandidate([cand("agr-1", ORG), theirs], ORG, { agreementId: "agr-2" })).toEqual({ kind: "none" });
  });

  it("an intent held only by another organization's agreement is not found", () => {
    const all = [cand("agr-1", ORG, ["i1"]), cand("agr-2", ORG, ["i2"]), cand("agr-3", "org-b", ["i9"])];
    expect(selectCandidate(all, ORG, { intentId: "i9" })).toEqual({ kind: "intent-not-found", intentId: "i9", agreementIds: ["agr-1", "agr-2"] });
  });
});

describe("selectCandidate: agreement_id", () => {
  it("picks the named candidate among several, whatever the intent says", () => {
    const a = cand("agr-1", ORG, ["i1"]);
    const b = cand("agr-2", ORG, ["i2"]);
    expect(selectCandidate([a, b], ORG, { agreementId: "agr-2" })).toEqual({ kind: "one", candidate: b });
    expect(selectCandidate([a, b], ORG, { agreementId: "agr-2", intentId: "i1" })).toEqual({ kind: "one", candidate: b });
  });

  it("answers none for an id that is not a candidate, even when exactly one candidate exists", () => {
    expect(selectCandidate([cand("agr-1", ORG)], ORG, { agreementId: "agr-x" })).toEqual({ kind: "none" });
    expect(selectCandidate([], ORG, { agreementId: "agr-1" })).toEqual({ kind: "none" });
  });
});

describe("selectCandidate: without agreement_id", () => {
  it("answers none without candidates", () => {
    expect(selectCandidate([], ORG, {})).toEqual({ kind: "none" });
    expect(selectCandidate([], ORG, { intentId: "i1" })).toEqual({ kind: "none" });
  });

  it("takes the only candidate, even when it does not hold the intent (the engine names the intent)", () => {
    const only = cand("agr-1", ORG, ["i1"]);
    expect(selectCandidate([only], ORG, {})).toEqual({ kind: "one", candidate: only });
    expect(selectCandidate([only], ORG, { intentId: "other" })).toEqual({ kind: "one", candidate: only });
  });

  it("several candidates without an intent are ambiguous, listed in the given order", () => {
    const all = [cand("agr-1", ORG), cand("agr-2", ORG), cand("agr-3", null)];
    expect(selectCandidate(all, ORG, {})).toEqual({ kind: "ambiguous", agreementIds: ["agr-1", "agr-2", "agr-3"] });
  });

  it("an intent held by exactly one of several candidates picks it", () => {
    const holder = cand("agr-2", ORG, ["food", "travel"]);
    const all = [cand("agr-1", ORG, ["office"]), holder, cand("agr-3", ORG, ["fuel"])];
    expect(selectCandidate(all, ORG, { intentId: "travel" })).toEqual({ kind: "one", candidate: holder });
  });

  it("an intent held by several candidates is ambiguous among those only", () => {
    const all = [cand("agr-1", ORG, ["food"]), cand("agr-2", ORG, ["office"]), cand("agr-3", ORG, ["food"])];
    expect(selectCandidate(all, ORG, { intentId: "food" })).toEqual({ kind: "ambiguous", agreementIds: ["agr-1", "agr-3"] });
  });

  it("an intent held by none of several candidates is not found, naming every visible candidate", () => {
    const all = [cand("agr-1", ORG, ["food"]), cand("agr-2", ORG, ["office"])];
    expect(selectCandidate(all, ORG, { intentId: "travel" })).toEqual({ kind: "intent-not-found", intentId: "travel", agreementIds: ["agr-1", "agr-2"] });
  });

  it("matches intent ids exactly (no case folding, no prefix)", () => {
    const all = [cand("agr-1", ORG, ["Food"]), cand("agr-2", ORG, ["food-2"])];
    expect(selectCandidate(all, ORG, { intentId: "food" }).kind).toBe("intent-not-found");
  });
});

describe("selectCandidate: properties", () => {
  const candidates = fc
    .array(
      fc.record({
        id: fc.integer({ min: 0, max: 9 }),
        org: fc.constantFrom<string | null>(ORG, "org-b", null),
        intents: fc.array(fc.constantFrom("i1", "i2", "i3"), { maxLength: 3 }),
      }),
      { maxLength: 6 },
    )
    .map((xs) => {
      const seen = new Set<number>();
      return xs.filter((x) => !seen.has(x.id) && seen.add(x.id)).map((x) => cand(`agr-${x.id}`, x.org, x.intents));
    });
  const request = fc.record(
    { agreementId: fc.integer({ min: 0, max: 9 }).map((n) => `agr-${n}`), intentId: fc.constantFrom("i1", "i2", "i3", "i4") },
    { requiredKeys: [] },
  );

  it("only ever picks or names candidates the caller's organization may see", () => {
    fc.assert(
      fc.property(candidates, request, (all, req) => {
        const visible = all.filter((c) => c.orgId === null || c.orgId === ORG);
        const visibleIds = visible.map((c) => c.agreementId);
        const sel = selectCandidate(all, ORG, req);
        if (sel.kind === "one") {
          expect(visible).toContain(sel.candidate);
          if (req.agreementId !== undefined) expect(sel.candidate.agreementId).toBe(req.agreementId);
        } else if (sel.kind === "ambiguous") {
          expect(sel.agreementIds.length).toBeGreaterThan(1);
          for (const id of sel.agreementIds) expect(visibleIds).toContain(id);
        } else if (sel.kind === "intent-not-found") {
          expect(sel.agreementIds).toEqual(visibleIds);
          expect(req.intentId).toBe(sel.intentId);
        } else {
          expect(req.agreementId !== undefined ? !visibleIds.includes(req.agreementId) : visible.length === 0).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});
