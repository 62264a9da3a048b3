import { describe, expect, it } from "vitest";
import { schemaErrorInSpec, schemaRefusal, specPath, summary } from "../../../src/controller/spec-errors.js";
import { delegationFromSpec } from "../../../src/core/crd/index.js";
import { validate } from "../../../src/core/schemas/index.js";

describe("spec paths", () => {
  it("turns record pointers into spec paths, the record's status into spec.state", () => {
    expect(specPath("/")).toBe("spec");
    expect(specPath("/scope/maximum_amount")).toBe("spec.scope.maximum_amount");
    expect(specPath("/conditions/0/timezone")).toBe("spec.conditions[0].timezone");
    expect(specPath("/status")).toBe("spec.state");
    expect(specPath("/a~1b/c~0d")).toBe('spec["a/b"]["c~d"]');
    expect(schemaErrorInSpec("/scope/currency: must match pattern")).toBe("spec.scope.currency: must match pattern");
    expect(schemaErrorInSpec("not a pointer")).toBe("not a pointer");
  });

  it("names the path and the rule of a real schema error", () => {
    const r = validate(
      "delegation",
      delegationFromSpec({
        delegation_id: "d",
        principal: { type: "business", id: "p" },
        agent: { agent_id: "a" },
        granted_at: "2026-01-01T00:00:00Z",
        expires_at: "2026-01-02T00:00:00Z",
        purpose: "x",
        scope: { currency: "EUR", maximum_amount: -1 },
      }),
    );
    expect(r.ok).toBe(false);
    const refusal = schemaRefusal(r.ok ? [] : r.errors);
    expect(refusal).toMatchObject({ condition: "Valid", code: "SPEC_INVALID" });
    expect(refusal.message).toMatch(/spec\.scope\.maximum_amount: .*0/);
  });

  it("lists at most ten errors and summarises several refusals", () => {
    const many = Array.from({ length: 12 }, (_, i) => `/f${i}: bad`);
    expect(schemaRefusal(many).message).toContain("(and 2 more)");
    expect(summary([])).toBe("");
    expect(
      summary([
        { condition: "Valid", code: "SPEC_INVALID", message: "one" },
        { condition: "Valid", code: "SPEC_INVALID", message: "two" },
      ]),
    ).toBe("one (and 1 more problem)");
  });
});
