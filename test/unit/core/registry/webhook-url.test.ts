import { describe, expect, it } from "vitest";
import { RegistryError, isLoopbackHost, parseWebhookUrl } from "../../../../src/core/registry/index.js";

function refused(url: string): boolean {
  try {
    parseWebhookUrl(url);
    return false;
  } catch (e) {
    expect(e).toBeInstanceOf(RegistryError);
    expect((e as RegistryError).code).toBe("WEBHOOK_URL_INVALID");
    return true;
  }
}

describe("parseWebhookUrl", () => {
  it("accepts https anywhere and returns the normalized URL", () => {
    expect(parseWebhookUrl("https://hooks.example.com/a?b=1")).toBe("https://hooks.example.com/a?b=1");
    expect(parseWebhookUrl("HTTPS://Hooks.Example.COM")).toBe("https://hooks.example.com/");
  });

  it("accepts http only on localhost, 127.0.0.0/8 and [::1]", () => {
    expect(parseWebhookUrl("http://localhost:8080/hook")).toBe("http://localhost:8080/hook");
    expect(parseWebhookUrl("http://127.0.0.1/x")).toBe("http://127.0.0.1/x");
    expect(parseWebhookUrl("http://127.9.8.7:1/")).toBe("http://127.9.8.7:1/");
    expect(parseWebhookUrl("http://[::1]:9/")).toBe("http://[::1]:9/");
    expect(refused("http://example.com/hook")).toBe(true);
    expect(refused("http://10.0.0.1/hook")).toBe(true);
    expect(refused("http://localhost.example.com/")).toBe(true);
    expect(refused("http://128.0.0.1/")).toBe(true);
    expect(refused("http://[::ffff:127.0.0.1]/")).toBe(true);
  });

  it("refuses other schemes, credentials, fragments, garbage and overlong URLs", () => {
    for (const u of [
      "ftp://example.com/",
      "javascript:alert(1)",
      "file:///etc/passwd",
      "ws://localhost/",
      "https://user:pw@example.com/",
      "https://user@example.com/",
      "http://user@localhost/",
      "https://example.com/#frag",
      "https://example.com/#",
      "not a url",
      "",
      `https://example.com/${"a".repeat(2048)}`,
    ]) {
      expect(refused(u), u).toBe(true);
    }
  });

  it("knows the loopback host names", () => {
    expect(isLoopbackHost("localhost")).toBe(true);
    expect(isLoopbackHost("[::1]")).toBe(true);
    expect(isLoopbackHost("127.0.0.1")).toBe(true);
    expect(isLoopbackHost("127.0.0.1.nip.io")).toBe(false);
  });
});
