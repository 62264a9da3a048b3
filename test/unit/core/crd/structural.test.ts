import { describe, expect, it } from "vitest";
import { CrdError, toStructural, type SchemaNode } from "../../../../src/core/crd/index.js";

const d = (description: string, rest: SchemaNode = {}): SchemaNode => ({ description, ...rest });

function codeOf(fn: () => unknown): { code: string; path: string } | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof CrdError) return { code: e.code, path: e.path };
    throw e;
  }
  return undefined;
}

describe("toStructural", () => {
  it("turns const into a one-value enum and infers the type from it", () => {
    const s = toStructural({ type: "object", properties: { v: d("Version.", { const: 1 }), k: d("Kind.", { const: "x" }) } });
    expect(s.properties?.v).toEqual({ type: "integer", description: "Version.", enum: [1] });
    expect(s.properties?.k).toEqual({ type: "string", description: "Kind.", enum: ["x"] });
  });

  it("infers the type of an untyped enum", () => {
    expect(toStructural(d("S.", { enum: ["a", "b"] }))).toEqual({ type: "string", description: "S.", enum: ["a", "b"] });
    expect(toStructural(d("N.", { enum: [1, 2.5] })).type).toBe("number");
  });

  it("turns [T, null] into nullable T", () => {
    expect(toStructural(d("Maybe.", { type: ["string", "null"] }))).toEqual({ type: "string", description: "Maybe.", nullable: true });
  });

  it("drops additionalProperties: false and title/$comment/examples; keeps bounds, pattern, format and defaults", () => {
    const s = toStructural({
      type: "object",
      title: "T",
      $comment: "c",
      additionalProperties: false,
      required: ["a"],
      properties: {
        a: d("A.", { type: "string", pattern: "^a$", minLength: 1, maxLength: 3, examples: ["a"] }),
        t: d("T.", { type: "string", format: "date-time" }),
        n: d("N.", { type: "integer", minimum: 0, maximum: 9007199254740991, default: 0 }),
        b: d("B.", { type: "boolean", default: true }),
      },
    });
    expect(s).toEqual({
      type: "object",
      properties: {
        a: { type: "string", description: "A.", pattern: "^a$", minLength: 1, maxLength: 3 },
        t: { type: "string", description: "T.", format: "date-time" },
        n: { type: "integer", description: "N.", default: 0, minimum: 0, maximum: 9007199254740991 },
        b: { type: "boolean", description: "B.", default: true },
      },
      required: ["a"],
    });
  });

  it("preserves unknown fields of open objects", () => {
    const s = toStructural({
      type: "object",
      properties: {
        open: d("Open.", { type: "object", additionalProperties: true, properties: { id: d("Id.", { type: "string" }) } }),
        bag: d("Bag.", { type: "object" }),
        map: d("Map.", { type: "object", additionalProperties: { type: "string" } }),
      },
    });
    expect(s.properties?.open?.["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    expect(s.properties?.open?.properties?.id?.type).toBe("string");
    expect(s.properties?.bag).toEqual({ type: "object", description: "Bag.", "x-kubernetes-preserve-unknown-fields": true });
    expect(s.properties?.map).toEqual({ type: "object", description: "Map.", additionalProperties: { type: "string" } });
  });

  it("turns uniqueItems on scalars into a set list, and drops it on objects", () => {
    const s = toStructural({
      type: "object",
      properties: {
        tags: d("Tags.", { type: "array", uniqueItems: true, items: { type: "string" } }),
        objs: d("Objs.", { type: "array", uniqueItems: true, items: { type: "object", properties: { a: d("A.", { type: "string" }) } } }),
      },
    });
    expect(s.properties?.tags).toEqual({ type: "array", description: "Tags.", items: { type: "string" }, "x-kubernetes-list-type": "set" });
    expect(s.properties?.objs?.["x-kubernetes-list-type"]).toBeUndefined();
    expect(JSON.stringify(s)).not.toContain("uniqueItems");
  });

  it("turns a numeric exclusiveMinimum into the OpenAPI 3.0 pair", () => {
    expect(toStructural(d("P.", { type: "number", exclusiveMinimum: 0 }))).toEqual({
      type: "number",
      description: "P.",
      minimum: 0,
      exclusiveMinimum: true,
    });
  });

  it("drops if/then/else and an allOf made only of them", () => {
    const s = toStructural({
      type: "object",
      properties: { s: d("S.", { type: "string" }) },
      allOf: [{ if: { required: ["s"] }, then: { required: ["t"] }, $comment: "c" }],
      if: { required: ["s"] },
      then: { required: ["x"] },
    });
    expect(s).toEqual({ type: "object", properties: { s: { type: "string", description: "S." } } });
  });

  it("keeps not: {required} as value validation and declares the forbidden member", () => {
    const s = toStructural({
      type: "object",
      properties: { kty: d("Key type.", { type: "string" }) },
      not: { required: ["d"], properties: { d: { description: "Never allowed." } } },
    });
    expect(s.not).toEqual({ required: ["d"] });
    expect(s.properties?.d).toEqual({ description: "Never allowed.", "x-kubernetes-preserve-unknown-fields": true });
  });

  it("drops any other not", () => {
    const s = toStructural({ type: "object", properties: { a: d("A.", { type: "string" }) }, not: { properties: { a: { const: "x" } } } });
    expect(s.not).toBeUndefined();
  });

  describe("oneOf", () => {
    const condition: SchemaNode = {
      type: "object",
      description: "A condition.",
      required: ["type"],
      properties: { type: d("Which.", { type: "string" }) },
      discriminator: { propertyName: "type" },
      oneOf: [
        {
          type: "object",
          description: "Window.",
          additionalProperties: false,
          required: ["type", "start", "zone"],
          properties: { type: d("w", { const: "window" }), start: d("Start.", { type: "string" }), zone: d("Zone.", { type: "string" }) },
        },
        {
          type: "object",
          description: "Hours.",
          additionalProperties: false,
          required: ["type", "zone"],
          properties: { type: d("h", { const: "hours" }), zone: d("Zone.", { type: "string" }) },
        },
      ],
    };

    it("merges the variants: union of properties, common required, union of enums", () => {
      const s = toStructural(condition);
      expect(Object.keys(s.properties ?? {})).toEqual(["type", "start", "zone"]);
      expect(s.required).toEqual(["type", "zone"]);
      expect(s.properties?.type).toEqual({ type: "string", description: "Which.", enum: ["window", "hours"] });
      expect(JSON.stringify(s)).not.toMatch(/oneOf|discriminator/);
    });

    it("describes each variant and which variants use a property", () => {
      const s = toStructural(condition);
      expect(s.description).toBe("A condition. For type window: Window. For type hours: Hours.");
      expect(s.properties?.start?.description).toBe("Start. Only when type is window.");
      expect(s.properties?.zone?.description).toBe("Zone.");
    });

    it("labels differing descriptions by variant and keeps only agreeing constraints", () => {
      const s = toStructural({
        type: "object",
        description: "Key.",
        oneOf: [
          { type: "object", properties: { kty: d("k", { const: "A" }), x: d("Key.", { type: "string", pattern: "^a$", minLength: 1 }) } },
          { type: "object", properties: { kty: d("k", { const: "B" }), x: d("X coordinate.", { type: "string", pattern: "^b$", minLength: 1 }) } },
        ],
        discriminator: { propertyName: "kty" },
      });
      expect(s.properties?.x).toEqual({ type: "string", description: "For kty A: Key. For kty B: X coordinate.", minLength: 1 });
    });

    it("refuses variants that disagree on a property's type", () => {
      const err = codeOf(() =>
        toStructural({
          type: "object",
          oneOf: [
            { type: "object", properties: { v: d("V.", { type: "string" }) } },
            { type: "object", properties: { v: d("V.", { type: "integer" }) } },
          ],
        }),
      );
      expect(err).toEqual({ code: "MERGE_CONFLICT", path: "/properties/v" });
    });
  });

  it("refuses what it cannot express, naming the path", () => {
    expect(codeOf(() => toStructural({ type: "object", properties: { a: d("A.", { $ref: "#/x" }) } }))).toEqual({
      code: "UNSUPPORTED_KEYWORD",
      path: "/properties/a/$ref",
    });
    expect(codeOf(() => toStructural({ type: "object", patternProperties: {} }))?.code).toBe("UNSUPPORTED_KEYWORD");
    expect(codeOf(() => toStructural({ type: "object", allOf: [{ required: ["a"] }] }))?.code).toBe("UNSUPPORTED_KEYWORD");
    expect(codeOf(() => toStructural({ type: "object", oneOf: [{ type: "object", prefixItems: [] }] }))?.code).toBe("UNSUPPORTED_KEYWORD");
    expect(codeOf(() => toStructural({ type: "object", properties: { a: d("A.", { type: "string", format: "iri" }) } }))).toEqual({
      code: "UNSUPPORTED_FORMAT",
      path: "/properties/a/format",
    });
    expect(codeOf(() => toStructural({ type: "object", properties: { a: { description: "Anything." } } }))).toEqual({
      code: "MISSING_TYPE",
      path: "/properties/a",
    });
    expect(codeOf(() => toStructural({ type: "array" }))?.code).toBe("MISSING_TYPE");
    expect(codeOf(() => toStructural({ type: ["string", "integer"] }))?.code).toBe("UNSUPPORTED_KEYWORD");
  });

  it("refuses a field without a description", () => {
    expect(codeOf(() => toStructural({ type: "object", properties: { a: { type: "string" } } }))).toEqual({
      code: "MISSING_DESCRIPTION",
      path: "/properties/a",
    });
    expect(codeOf(() => toStructural({ type: "object", properties: { a: { type: "string", description: "  " } } }))?.code).toBe("MISSING_DESCRIPTION");
  });

  it("does not change its input", () => {
    const input: SchemaNode = { type: "object", properties: { a: d("A.", { const: "x" }) }, oneOf: [{ type: "object" }] };
    const copy = structuredClone(input);
    toStructural(input);
    expect(input).toEqual(copy);
  });
});
