import { describe, expect, it } from "vitest";
import { loadWebhookSettings } from "../../../src/webhooks/settings.js";

describe("BUR_WEBHOOK_* settings", () => {
  it("defaults", () => {
    const problems: string[] = [];
    expect(loadWebhookSettings({}, problems)).toEqual({
      worker: true,
      timeoutMs: 5000,
      connectTimeoutMs: 2000,
      maxAttempts: 12,
      backoffMinMs: 1000,
      backoffMaxMs: 600_000,
      concurrency: 64,
      destinationConcurrency: 2,
      hostConcurrency: 4,
      orgConcurrency: 8,
      pollMs: 1000,
    });
    expect(problems).toEqual([]);
  });

  it("reads whole numbers in range and the worker switch", () => {
    const problems: string[] = [];
    const s = loadWebhookSettings(
      {
        BUR_WEBHOOK_WORKER: "0",
        BUR_WEBHOOK_TIMEOUT_MS: "250",
        BUR_WEBHOOK_MAX_ATTEMPTS: "3",
        BUR_WEBHOOK_BACKOFF_MIN_MS: " 10 ",
        BUR_WEBHOOK_BACKOFF_MAX_MS: "40",
        BUR_WEBHOOK_CONCURRENCY: "2",
        BUR_WEBHOOK_DESTINATION_CONCURRENCY: "1",
        BUR_WEBHOOK_HOST_CONCURRENCY: "3",
        BUR_WEBHOOK_ORG_CONCURRENCY: "5",
        BUR_WEBHOOK_CONNECT_TIMEOUT_MS: "100",
        BUR_WEBHOOK_POLL_MS: "50",
      },
      problems,
    );
    expect(s).toEqual({
      worker: false,
      timeoutMs: 250,
      connectTimeoutMs: 100,
      maxAttempts: 3,
      backoffMinMs: 10,
      backoffMaxMs: 40,
      concurrency: 2,
      destinationConcurrency: 1,
      hostConcurrency: 3,
      orgConcurrency: 5,
      pollMs: 50,
    });
    expect(problems).toEqual([]);
  });

  it("reports unusable values and keeps the defaults", () => {
    const problems: string[] = [];
    const s = loadWebhookSettings(
      {
        BUR_WEBHOOK_TIMEOUT_MS: "5s",
        BUR_WEBHOOK_MAX_ATTEMPTS: "0",
        BUR_WEBHOOK_CONCURRENCY: "-1",
        BUR_WEBHOOK_POLL_MS: "1.5",
        BUR_WEBHOOK_DESTINATION_CONCURRENCY: "0",
        BUR_WEBHOOK_CONNECT_TIMEOUT_MS: "x",
      },
      problems,
    );
    expect(s).toMatchObject({ timeoutMs: 5000, connectTimeoutMs: 2000, maxAttempts: 12, concurrency: 64, destinationConcurrency: 2, pollMs: 1000 });
    expect(problems).toHaveLength(6);
    expect(problems.join("\n")).toMatch(/BUR_WEBHOOK_TIMEOUT_MS/);
  });

  it("raises a backoff cap below the minimum to the minimum", () => {
    const problems: string[] = [];
    const s = loadWebhookSettings({ BUR_WEBHOOK_BACKOFF_MIN_MS: "5000", BUR_WEBHOOK_BACKOFF_MAX_MS: "100" }, problems);
    expect(s).toMatchObject({ backoffMinMs: 5000, backoffMaxMs: 5000 });
    expect(problems).toHaveLength(1);
  });
});
