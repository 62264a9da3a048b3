import { describe, expect, it } from "vitest";
import { isDataException, isDbUnavailable, isUnstorableText } from "../../../src/store/db-errors.js";

/** An error shaped as node-postgres raises one from an ErrorResponse. */
const pgError = (code: string, message = "x") => Object.assign(new Error(message), { code });

describe("database error classification", () => {
  it("a standby's recovery conflict (40001), a demoted primary (25006), shutdowns and connection failures are 'unavailable'", () => {
    for (const code of ["40001", "25006", "57P01", "57P02", "57P03", "53300", "08006", "08001"]) expect(isDbUnavailable(pgError(code)), code).toBe(true);
    expect(isDbUnavailable(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isDbUnavailable(new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })]))).toBe(true);
    expect(isDbUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
  });

  it("a worker a Citus coordinator lost in the transaction (XX000, 'failure on connection marked as essential') is 'unavailable'; another XX000 is not", () => {
    expect(isDbUnavailable(pgError("XX000", "failure on connection marked as essential: 127.0.0.1:5433"))).toBe(true);
    expect(isDbUnavailable(pgError("XX000", "could not create distributed plan"))).toBe(false);
    expect(isDbUnavailable(pgError("23505", "failure on connection marked as essential: 127.0.0.1:5433"))).toBe(false);
  });

  it("constraint violations, syntax errors, deadlocks and data exceptions are not", () => {
    for (const code of ["23505", "42601", "40P01", "22021", "P0001"]) expect(isDbUnavailable(pgError(code)), code).toBe(false);
    expect(isDbUnavailable(new Error("something else"))).toBe(false);
    expect(isDbUnavailable(null)).toBe(false);
  });

  it("data exceptions are class 22; unstorable text is 22021 or 22P05", () => {
    expect(isDataException(pgError("22P02"))).toBe(true);
    expect(isDataException(pgError("23505"))).toBe(false);
    expect(isUnstorableText(pgError("22021"))).toBe(true);
    expect(isUnstorableText(pgError("22P02"))).toBe(false);
  });
});
