import { describe, expect, it } from "vitest";
import { loadFxSettings } from "../../../src/fx/settings.js";

describe("loadFxSettings", () => {
  it('defaults to no source, a 2000 ms timeout and "no rate" answers remembered for 10 minutes', () => {
    const problems: string[] = [];
    expect(loadFxSettings({}, problems)).toEqual({ sourceUrl: null, timeoutMs: 2000, noRateTtlMs: 600_000 });
    expect(problems).toEqual([]);
  });

  it("reads an http(s) base URL without trailing slashes and a timeout", () => {
    const problems: string[] = [];
    expect(loadFxSettings({ SVC_FX_SOURCE_URL: " https://api.frankfurter.dev/v1/ ", SVC_FX_TIMEOUT_MS: "750", SVC_FX_NO_RATE_TTL_MS: "0" }, problems)).toEqual({
      sourceUrl: "https://api.frankfurter.dev/v1",
      timeoutMs: 750,
      noRateTtlMs: 0,
    });
    expect(problems).toEqual([]);
  });

  it("reports unusable values and falls back (no source, default timeout)", () => {
    for (const url of ["not a url", "ftp://x.example", "https://x.example/v1?base=EUR", "https://u:p@x.example"]) {
      const problems: string[] = [];
      expect(loadFxSettings({ SVC_FX_SOURCE_URL: url }, problems).sourceUrl).toBeNull();
      expect(problems).toHaveLength(1);
    }
    for (const t of ["-1", "86400001", "1.5"]) {
      const problems: string[] = [];
      expect(loadFxSettings({ SVC_FX_NO_RATE_TTL_MS: t }, problems).noRateTtlMs).toBe(600_000);
      expect(problems).toHaveLength(1);
    }
    for (const t of ["0", "60001", "1.5", "abc"]) {
      const problems: string[] = [];
      expect(loadFxSettings({ SVC_FX_TIMEOUT_MS: t }, problems).timeoutMs).toBe(2000);
      expect(problems).toHaveLength(1);
    }
  });
});
