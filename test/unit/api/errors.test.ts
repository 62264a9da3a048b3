import { describe, expect, it } from "vitest";
import { toResponse } from "../../../src/api/errors.js";

describe("toResponse", () => {
  it("answers 400, not 500, when Postgres refuses text (NUL, unrepresentable characters)", () => {
    for (const code of ["22021", "22P05"]) {
      expect(toResponse(Object.assign(new Error("invalid byte sequence"), { code }))).toEqual({
        status: 400,
        error: "text must not contain NUL or unrepresentable characters",
        logAsError: false,
      });
    }
  });
  it("answers 400, not 500, for any other data exception (SQLSTATE class 22, e.g. a lone surrogate jsonb refuses)", () => {
    for (const code of ["22P02", "22003", "22001"]) {
      expect(toResponse(Object.assign(new Error("invalid input syntax for type json"), { code }))).toEqual({
        status: 400,
        error: "a value of the request cannot be stored",
        logAsError: false,
      });
    }
  });
  it("keeps other database errors internal (500, message never sent)", () => {
    const r = toResponse(Object.assign(new Error('duplicate key value violates unique constraint "secret"'), { code: "23505" }));
    expect(r).toEqual({ status: 500, error: "internal error", logAsError: true });
  });
  it("answers 503 for an unreachable database", () => {
    expect(toResponse(Object.assign(new Error("x"), { code: "ECONNREFUSED" })).status).toBe(503);
  });
});
