import { describe, expect, it } from "vitest";
import type { FastifySchemaValidationError } from "fastify";
import { describeSchemaError } from "../../../../src/api/routes/shared/schema-errors.js";
import { NO_NUL_PATTERN, hasNul, textSchema, validatorForSchema } from "../../../../src/core/schemas/index.js";

describe("the text rule (src/core/schemas/text.ts)", () => {
  it("textSchema is a string within its bounds, without NUL", () => {
    expect(textSchema({ minLength: 1, maxLength: 256 })).toEqual({ type: "string", minLength: 1, maxLength: 256, pattern: NO_NUL_PATTERN });
    const ok = validatorForSchema({ type: "object", properties: { name: textSchema({ maxLength: 4 }) } });
    expect(ok({ name: "abcd" }).ok).toBe(true);
    expect(ok({ name: "a\u0000b" }).ok).toBe(false);
    expect(ok({ name: "abcde" }).ok).toBe(false);
  });

  it("the edge's formatter answers the pattern in plain words", () => {
    const e = {
      keyword: "pattern",
      instancePath: "/name",
      schemaPath: "#/properties/name/pattern",
      params: { pattern: NO_NUL_PATTERN },
      message: "",
    } as FastifySchemaValidationError;
    expect(describeSchemaError(e, "body")).toBe("name must not contain U+0000");
  });

  it("hasNul looks into strings, arrays, member names and values", () => {
    expect(hasNul("a\u0000")).toBe(true);
    expect(hasNul("abc")).toBe(false);
    expect(hasNul({ a: ["x", { b: "y\u0000" }] })).toBe(true);
    expect(hasNul({ "k\u0000": 1 })).toBe(true);
    expect(hasNul({ a: [1, null, true, "ok"] })).toBe(false);
    expect(hasNul(7)).toBe(false);
  });
});
