import { describe, expect, it } from "vitest";
import {
  DEFAULT_ACK_DOMAIN_TIMEOUT_MS,
  DEFAULT_CACHE_MAX_AGENTS,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_DENIED_ATTEMPT_BURST,
  DEFAULT_DENIED_ATTEMPT_WINDOW_SECONDS,
  loadVerifySettings,
} from "../../../src/verify/settings.js";

function load(env: Record<string, string>) {
  const problems: string[] = [];
  return { settings: loadVerifySettings(env, problems), problems };
}

describe("verify settings", () => {
  it("defaults", () => {
    expect(load({})).toEqual({
      settings: {
        ackDomainScheme: "https",
        ackDomainPort: null,
        ackDomainTimeoutMs: DEFAULT_ACK_DOMAIN_TIMEOUT_MS,
        cacheTtlMs: DEFAULT_CACHE_TTL_MS,
        cacheMaxAgents: DEFAULT_CACHE_MAX_AGENTS,
        deniedAttemptBurst: 5,
        deniedAttemptWindowSeconds: 60,
        spendBatchMax: 64,
        spendBatchWaitMs: 1,
        spendBatchesInFlight: 2,
        proposedAtSkewSeconds: 300,
        periodHourCountersFrom: 16,
      },
      problems: [],
    });
    expect([DEFAULT_DENIED_ATTEMPT_BURST, DEFAULT_DENIED_ATTEMPT_WINDOW_SECONDS]).toEqual([5, 60]);
  });

  it("reads WRIT_DENIED_ATTEMPT_BURST (0 = off) and WRIT_DENIED_ATTEMPT_WINDOW_SECONDS", () => {
    expect(load({ WRIT_DENIED_ATTEMPT_BURST: "0", WRIT_DENIED_ATTEMPT_WINDOW_SECONDS: "300" }).settings).toMatchObject({
      deniedAttemptBurst: 0,
      deniedAttemptWindowSeconds: 300,
    });
    const bad = load({ WRIT_DENIED_ATTEMPT_BURST: "-1", WRIT_DENIED_ATTEMPT_WINDOW_SECONDS: "0" });
    expect(bad.settings).toMatchObject({ deniedAttemptBurst: 5, deniedAttemptWindowSeconds: 60 });
    expect(bad.problems).toEqual([
      "WRIT_DENIED_ATTEMPT_BURST must be an integer from 0 to 1000; using 5",
      "WRIT_DENIED_ATTEMPT_WINDOW_SECONDS must be an integer from 1 to 86400; using 60",
    ]);
  });

  it("reads WRIT_SPEND_BATCH_MAX (1 = a transaction per ALLOW), WRIT_SPEND_BATCH_WAIT_MS (0 = no wait) and WRIT_SPEND_BATCHES_IN_FLIGHT", () => {
    expect(load({ WRIT_SPEND_BATCH_MAX: "1", WRIT_SPEND_BATCH_WAIT_MS: "0", WRIT_SPEND_BATCHES_IN_FLIGHT: "1" }).settings).toMatchObject({
      spendBatchMax: 1,
      spendBatchWaitMs: 0,
      spendBatchesInFlight: 1,
    });
    const bad = load({ WRIT_SPEND_BATCH_MAX: "0", WRIT_SPEND_BATCH_WAIT_MS: "101", WRIT_SPEND_BATCHES_IN_FLIGHT: "65" });
    expect(bad.settings).toMatchObject({ spendBatchMax: 64, spendBatchWaitMs: 1, spendBatchesInFlight: 2 });
    expect(bad.problems).toEqual([
      "WRIT_SPEND_BATCH_MAX must be an integer from 1 to 1000; using 64",
      "WRIT_SPEND_BATCH_WAIT_MS must be an integer from 0 to 100; using 1",
      "WRIT_SPEND_BATCHES_IN_FLIGHT must be an integer from 1 to 64; using 2",
    ]);
  });

  it("reads WRIT_PERIOD_HOUR_COUNTERS_FROM, 1 (every payment of a rolling window in its hour) to 1000000, default 16", () => {
    expect(load({}).settings.periodHourCountersFrom).toBe(16);
    expect(load({ WRIT_PERIOD_HOUR_COUNTERS_FROM: "1" }).settings.periodHourCountersFrom).toBe(1);
    const bad = load({ WRIT_PERIOD_HOUR_COUNTERS_FROM: "0" });
    expect(bad.settings.periodHourCountersFrom).toBe(16);
    expect(bad.problems).toEqual(["WRIT_PERIOD_HOUR_COUNTERS_FROM must be an integer from 1 to 1000000; using 16"]);
  });

  it("reads WRIT_PROPOSED_AT_SKEW_SECONDS, 1 to 86400", () => {
    expect(load({ WRIT_PROPOSED_AT_SKEW_SECONDS: "30" }).settings.proposedAtSkewSeconds).toBe(30);
    const bad = load({ WRIT_PROPOSED_AT_SKEW_SECONDS: "0" });
    expect(bad.settings.proposedAtSkewSeconds).toBe(300);
    expect(bad.problems).toEqual(["WRIT_PROPOSED_AT_SKEW_SECONDS must be an integer from 1 to 86400; using 300"]);
  });

  it("reads WRIT_CACHE_TTL_MS from 0 (caches off) to an hour", () => {
    expect(load({ WRIT_CACHE_TTL_MS: "0" }).settings.cacheTtlMs).toBe(0);
    expect(load({ WRIT_CACHE_TTL_MS: " 3600000 " }).settings.cacheTtlMs).toBe(3_600_000);
    for (const bad of ["-1", "3600001", "1e3", "soon"]) {
      const r = load({ WRIT_CACHE_TTL_MS: bad });
      expect(r.settings.cacheTtlMs).toBe(DEFAULT_CACHE_TTL_MS);
      expect(r.problems).toEqual([`WRIT_CACHE_TTL_MS must be an integer from 0 to 3600000; using ${DEFAULT_CACHE_TTL_MS}`]);
    }
  });

  it("reads WRIT_CACHE_MAX_AGENTS from 1 to 10,000,000", () => {
    expect(load({ WRIT_CACHE_MAX_AGENTS: "1" }).settings.cacheMaxAgents).toBe(1);
    expect(load({ WRIT_CACHE_MAX_AGENTS: "50000" }).settings.cacheMaxAgents).toBe(50_000);
    expect(load({ WRIT_CACHE_MAX_AGENTS: "10000000" }).settings.cacheMaxAgents).toBe(10_000_000);
    for (const bad of ["0", "10000001", "1e4", "-5", "many"]) {
      const r = load({ WRIT_CACHE_MAX_AGENTS: bad });
      expect(r.settings.cacheMaxAgents).toBe(DEFAULT_CACHE_MAX_AGENTS);
      expect(r.problems).toEqual([`WRIT_CACHE_MAX_AGENTS must be an integer from 1 to 10000000; using ${DEFAULT_CACHE_MAX_AGENTS}`]);
    }
  });

  it("falls back on unusable acknowledgement-domain settings with a problem each", () => {
    const r = load({ WRIT_ACK_DOMAIN_SCHEME: "ftp", WRIT_ACK_DOMAIN_PORT: "70000", WRIT_ACK_DOMAIN_TIMEOUT_MS: "0" });
    expect(r.settings).toMatchObject({ ackDomainScheme: "https", ackDomainPort: null, ackDomainTimeoutMs: DEFAULT_ACK_DOMAIN_TIMEOUT_MS });
    expect(r.problems).toHaveLength(3);
  });
});
