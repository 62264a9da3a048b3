import { describe, expect, it } from "vitest";
import { ControllerSettingsError, loadControllerSettings } from "../../../src/controller/settings.js";
import { controllerPoolOptions } from "../../../src/controller/manager.js";

const base = { DATABASE_URL: "postgres://x@localhost/writ" };

describe("loadControllerSettings", () => {
  it("has the chart's contract and controller-runtime's defaults", () => {
    const s = loadControllerSettings(base);
    expect(s).toMatchObject({
      host: "127.0.0.1",
      port: 8081,
      watchNamespaces: [],
      leaseName: undefined,
      leaseNamespace: "default",
      workers: 16,
      resyncMs: 600_000,
      silenceMs: 150_000,
      logOrigin: "writ.local/log",
      logSigner: undefined,
    });
    expect(s.rateLimits).toEqual({ baseDelayMs: 5, maxDelayMs: 1_000_000, qps: 10, burst: 100 });
    expect(s.problems).toEqual([]);
  });

  it("reads what the chart sets", () => {
    const s = loadControllerSettings({
      ...base,
      HOST: "0.0.0.0",
      PORT: "9090",
      POD_NAME: "writ-controller-x",
      POD_NAMESPACE: "writ-system",
      WRIT_WATCH_NAMESPACES: "a, b,,",
      WRIT_LEADER_ELECTION_LEASE: "writ-controller",
      SVC_LOG_SIGNING_SEED: "22".repeat(32),
    });
    expect(s).toMatchObject({
      host: "0.0.0.0",
      port: 9090,
      podName: "writ-controller-x",
      watchNamespaces: ["a", "b"],
      leaseName: "writ-controller",
      leaseNamespace: "writ-system",
    });
    expect(s.logSigner?.alg).toBe("EdDSA");
  });

  it("refuses what it cannot run without, and falls back (with a problem) for the rest", () => {
    expect(() => loadControllerSettings({})).toThrow(ControllerSettingsError);
    expect(() => loadControllerSettings({ ...base, PORT: "http" })).toThrow(/PORT/);
    expect(() => loadControllerSettings({ ...base, SVC_LOG_SIGNING_SEED: "short" })).toThrow(/SVC_LOG_SIGNING_SEED/);
    const s = loadControllerSettings({ ...base, WRIT_CONTROLLER_WORKERS: "0", LOG_LEVEL: "loud" });
    expect(s.workers).toBe(16);
    expect(s.logLevel).toBe("info");
    expect(s.problems).toHaveLength(2);
  });

  it("reads the leader election timings, the webhook and the heartbeat, and refuses timings client-go would", () => {
    const d = loadControllerSettings(base);
    expect(d).toMatchObject({
      leaderElection: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000 },
      webhookPort: undefined,
      heartbeatIntervalMs: 1000,
    });
    const s = loadControllerSettings({
      ...base,
      WRIT_LEADER_ELECTION_LEASE_DURATION: "30",
      WRIT_LEADER_ELECTION_RENEW_DEADLINE: "20",
      WRIT_LEADER_ELECTION_RETRY_PERIOD: "4",
      WRIT_WEBHOOK_PORT: "9443",
      WRIT_WEBHOOK_CERT_DIR: "/certs",
      WRIT_HEARTBEAT_INTERVAL_MS: "500",
    });
    expect(s).toMatchObject({
      leaderElection: { leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 4000 },
      webhookPort: 9443,
      webhookCertDir: "/certs",
      heartbeatIntervalMs: 500,
    });
    expect(() => loadControllerSettings({ ...base, WRIT_LEADER_ELECTION_LEASE_DURATION: "10", WRIT_LEADER_ELECTION_RENEW_DEADLINE: "10" })).toThrow(
      /lease duration \(10 s\) must be longer than the renew deadline/,
    );
    expect(() => loadControllerSettings({ ...base, WRIT_LEADER_ELECTION_RENEW_DEADLINE: "2", WRIT_LEADER_ELECTION_RETRY_PERIOD: "2" })).toThrow(
      ControllerSettingsError,
    );
    expect(() => loadControllerSettings({ ...base, WRIT_WEBHOOK_PORT: "https" })).toThrow(/WRIT_WEBHOOK_PORT/);
  });

  it("commits with WRIT_SYNCHRONOUS_COMMIT as the data plane does; an unknown level is a problem and the server's setting stays", () => {
    const s = loadControllerSettings({ ...base, WRIT_SYNCHRONOUS_COMMIT: "remote_apply" });
    expect([s.synchronousCommit, s.problems]).toEqual(["remote_apply", []]);
    expect(controllerPoolOptions(s)).toEqual({ max: 24, applicationName: "writ-controller", synchronousCommit: "remote_apply" });
    const unset = loadControllerSettings(base);
    expect(unset.synchronousCommit).toBeNull();
    expect(controllerPoolOptions(unset)).not.toHaveProperty("synchronousCommit");
    const bad = loadControllerSettings({ ...base, WRIT_SYNCHRONOUS_COMMIT: "always" });
    expect(bad.synchronousCommit).toBeNull();
    expect(bad.problems).toEqual([expect.stringMatching(/^WRIT_SYNCHRONOUS_COMMIT must be one of remote_apply, on, remote_write, local, off/)]);
  });
});
