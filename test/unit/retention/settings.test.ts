import { describe, expect, it } from "vitest";
import {
  DEFAULT_DECISION_RETENTION_DAYS,
  DEFAULT_RETENTION_INTERVAL_MS,
  DEFAULT_WEBHOOK_RETENTION_DAYS,
  loadRetentionSettings,
} from "../../../src/retention/settings.js";

describe("loadRetentionSettings", () => {
  it("has defaults: every 10 minutes, 30 days of decisions and of finished deliveries", () => {
    const problems: string[] = [];
    expect(loadRetentionSettings({}, problems)).toEqual({
      intervalMs: DEFAULT_RETENTION_INTERVAL_MS,
      decisionDays: DEFAULT_DECISION_RETENTION_DAYS,
      webhookDays: DEFAULT_WEBHOOK_RETENTION_DAYS,
      holdExpirySeconds: 0,
      holdSweepIntervalMs: 60_000,
    });
    expect([DEFAULT_RETENTION_INTERVAL_MS, DEFAULT_DECISION_RETENTION_DAYS, DEFAULT_WEBHOOK_RETENTION_DAYS]).toEqual([600_000, 30, 30]);
    expect(problems).toEqual([]);
  });
  it("reads values in range; 0 turns the pass off", () => {
    const problems: string[] = [];
    expect(
      loadRetentionSettings({ WRIT_RETENTION_INTERVAL_MS: "0", WRIT_DECISION_RETENTION_DAYS: "1", WRIT_WEBHOOK_RETENTION_DAYS: "36500" }, problems),
    ).toEqual({ intervalMs: 0, decisionDays: 1, webhookDays: 36_500, holdExpirySeconds: 0, holdSweepIntervalMs: 60_000 });
    expect(problems).toEqual([]);
  });
  it("refuses a decision retention under a day (the denial-burst rule counts the last minute) and other bad values", () => {
    const problems: string[] = [];
    expect(loadRetentionSettings({ WRIT_RETENTION_INTERVAL_MS: "-1", WRIT_DECISION_RETENTION_DAYS: "0", WRIT_WEBHOOK_RETENTION_DAYS: "x" }, problems)).toEqual({
      intervalMs: 600_000,
      decisionDays: 30,
      webhookDays: 30,
      holdExpirySeconds: 0,
      holdSweepIntervalMs: 60_000,
    });
    expect(problems).toEqual([
      "WRIT_RETENTION_INTERVAL_MS must be an integer from 0 to 86400000; using 600000",
      "WRIT_DECISION_RETENTION_DAYS must be an integer from 1 to 36500; using 30",
      "WRIT_WEBHOOK_RETENTION_DAYS must be an integer from 1 to 36500; using 30",
    ]);
  });
  it("reads the hold expiry (0 = holds never expire) and its sweep interval, and refuses values out of range", () => {
    const problems: string[] = [];
    expect(loadRetentionSettings({ WRIT_HOLD_EXPIRY_SECONDS: "604800", WRIT_HOLD_SWEEP_INTERVAL_MS: "5000" }, problems)).toMatchObject({
      holdExpirySeconds: 604_800,
      holdSweepIntervalMs: 5000,
    });
    expect(loadRetentionSettings({ WRIT_HOLD_EXPIRY_SECONDS: "-1", WRIT_HOLD_SWEEP_INTERVAL_MS: "10" }, problems)).toMatchObject({
      holdExpirySeconds: 0,
      holdSweepIntervalMs: 60_000,
    });
    expect(problems).toEqual([
      "WRIT_HOLD_EXPIRY_SECONDS must be an integer from 0 to 31536000; using 0",
      "WRIT_HOLD_SWEEP_INTERVAL_MS must be an integer from 1000 to 86400000; using 60000",
    ]);
  });
});
