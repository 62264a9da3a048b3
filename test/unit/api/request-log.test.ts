import { describe, expect, it } from "vitest";
import { redactUrl } from "../../../src/api/request-log.js";
import { loadTrustProxy } from "../../../src/api/settings.js";

describe("redactUrl", () => {
  it("replaces the values of credential-carrying query parameters, and keeps everything else", () => {
    expect(redactUrl("/portal/sign-in?token=abc&lang=en")).toBe("/portal/sign-in?token=[redacted]&lang=en");
    expect(redactUrl("/x?TOKEN=a&Session_Token=b&access_token=c&code=d&key=e&secret=f")).toBe(
      "/x?TOKEN=[redacted]&Session_Token=[redacted]&access_token=[redacted]&code=[redacted]&key=[redacted]&secret=[redacted]",
    );
    expect(redactUrl("/x?%74oken=abc")).toBe("/x?%74oken=[redacted]"); // an escaped name is the same name
    expect(redactUrl("/v1/log/entries/3/proof?tree_size=4")).toBe("/v1/log/entries/3/proof?tree_size=4");
    expect(redactUrl("/x?token")).toBe("/x?token");
    expect(redactUrl("/x?a=%E0%A4%A&token=z")).toBe("/x?a=%E0%A4%A&token=[redacted]");
    expect(redactUrl("/x#token=abc")).toBe("/x");
    expect(redactUrl("/plain")).toBe("/plain");
  });
});

describe("WRIT_TRUST_PROXY", () => {
  it("is off by default and reads hop counts and address lists; anything else is a problem and off", () => {
    const problems: string[] = [];
    expect(loadTrustProxy(null, problems)).toBe(false);
    expect(loadTrustProxy("2", problems)).toBe(2);
    expect(loadTrustProxy("10.0.0.0/8, 127.0.0.1,loopback, ::1, fd00::/8", problems)).toBe("10.0.0.0/8,127.0.0.1,loopback,::1,fd00::/8");
    expect(problems).toEqual([]);
    for (const bad of ["true", "0", "11", "10.0.0.0/33", "example.com", "1.2.3.4/8/9", "::1/129"]) expect(loadTrustProxy(bad, problems), bad).toBe(false);
    expect(problems).toHaveLength(7);
  });
});
