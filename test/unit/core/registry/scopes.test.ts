import { describe, expect, it } from "vitest";
import {
  ORG_TYPES,
  RegistryError,
  SCOPES,
  allowedScopes,
  defaultScopes,
  isOrgType,
  isScope,
  missingScopes,
  resolveScopes,
} from "../../../../src/core/registry/index.js";

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof RegistryError ? e.code : "other";
  }
  return undefined;
}

describe("scopes", () => {
  it("names exactly the eight scopes", () => {
    expect([...SCOPES]).toEqual([
      "keys:write",
      "agents:write",
      "registry:read",
      "verify",
      "inquiries:write",
      "reports:write",
      "subscriptions:write",
      "outcomes:write",
    ]);
    expect(isScope("registry:read")).toBe(true);
    expect(isScope("admin")).toBe(false);
    expect(isScope(undefined)).toBe(false);
  });

  it("gives agent operators keys:write, agents:write, verify and registry:read by default", () => {
    expect(defaultScopes("agent_operator")).toEqual(["keys:write", "agents:write", "registry:read", "verify"]);
    // The side that spends never records outcomes (it would release its own spend).
    expect(code(() => resolveScopes("agent_operator", ["outcomes:write"]))).toBe("SCOPE_NOT_ALLOWED");
  });

  it("gives every payment-side type keys:write, registry:read, inquiries:write, reports:write, subscriptions:write, outcomes:write by default", () => {
    for (const t of ["wallet", "bank_issuer", "processor_psp", "merchant"] as const) {
      expect(defaultScopes(t)).toEqual(["keys:write", "registry:read", "inquiries:write", "reports:write", "subscriptions:write", "outcomes:write"]);
      expect(allowedScopes(t)).toEqual(defaultScopes(t));
      expect(() => resolveScopes(t, ["verify"])).toThrow();
    }
  });

  it("lets every type hold its defaults, and only agent operators hold agents:write", () => {
    for (const t of ORG_TYPES) {
      expect(missingScopes(allowedScopes(t), defaultScopes(t))).toEqual([]);
      expect(allowedScopes(t).includes("agents:write")).toBe(t === "agent_operator");
    }
  });

  it("resolves a name-only request to the defaults", () => {
    expect(resolveScopes("merchant", undefined)).toEqual(defaultScopes("merchant"));
  });

  it("resolves an explicit list to a deduplicated subset in SCOPES order", () => {
    expect(resolveScopes("wallet", ["reports:write", "registry:read", "reports:write"])).toEqual(["registry:read", "reports:write"]);
  });

  it("refuses an empty list, an unknown scope, and a scope the type may not hold", () => {
    expect(code(() => resolveScopes("wallet", []))).toBe("SCOPES_EMPTY");
    expect(code(() => resolveScopes("wallet", ["root"]))).toBe("SCOPE_UNKNOWN");
    expect(code(() => resolveScopes("wallet", [7]))).toBe("SCOPE_UNKNOWN");
    expect(code(() => resolveScopes("wallet", ["agents:write"]))).toBe("SCOPE_NOT_ALLOWED");
    expect(code(() => resolveScopes("agent_operator", ["reports:write"]))).toBe("SCOPE_NOT_ALLOWED");
  });

  it("reports the scopes a holder lacks", () => {
    expect(missingScopes(["keys:write"], ["keys:write", "verify"])).toEqual(["verify"]);
    expect(missingScopes(["keys:write", "verify"], ["verify"])).toEqual([]);
  });

  it("knows the five organization types", () => {
    expect([...ORG_TYPES]).toEqual(["agent_operator", "wallet", "bank_issuer", "processor_psp", "merchant"]);
    expect(isOrgType("bank")).toBe(false);
  });
});
