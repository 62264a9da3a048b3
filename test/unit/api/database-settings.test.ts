import { describe, expect, it } from "vitest";
import { loadSettings, SettingsError } from "../../../src/api/settings.js";

describe("database settings", () => {
  it("reads a multi-host DATABASE_URL, DATABASE_READ_URL and WRIT_SYNCHRONOUS_COMMIT", () => {
    const s = loadSettings({
      DATABASE_URL: "postgres://u:p@127.0.0.1:5432,127.0.0.1:5433/writ?target_session_attrs=read-write",
      DATABASE_READ_URL: "postgres://u:p@127.0.0.1:5432,127.0.0.1:5433/writ?target_session_attrs=prefer-standby",
      WRIT_SYNCHRONOUS_COMMIT: "remote_apply",
    });
    expect([s.databaseUrl, s.databaseReadUrl, s.synchronousCommit, s.problems]).toEqual([
      "postgres://u:p@127.0.0.1:5432,127.0.0.1:5433/writ?target_session_attrs=read-write",
      "postgres://u:p@127.0.0.1:5432,127.0.0.1:5433/writ?target_session_attrs=prefer-standby",
      "remote_apply",
      [],
    ]);
    expect([loadSettings({}).databaseReadUrl, loadSettings({}).synchronousCommit]).toEqual([null, null]);
  });

  it("stops the process for a database URL it cannot read, naming the setting", () => {
    expect(() => loadSettings({ DATABASE_URL: "postgres://h1:1,h2:2/d?target_session_attrs=leader" })).toThrow(SettingsError);
    expect(() => loadSettings({ DATABASE_READ_URL: "postgres://h1:1,,h2/d" })).toThrow(/^DATABASE_READ_URL: /);
  });

  it("reports an unknown WRIT_SYNCHRONOUS_COMMIT and keeps the server's setting", () => {
    const s = loadSettings({ WRIT_SYNCHRONOUS_COMMIT: "always" });
    expect(s.synchronousCommit).toBeNull();
    expect(s.problems).toEqual([expect.stringMatching(/^WRIT_SYNCHRONOUS_COMMIT must be one of remote_apply, on, /)]);
  });
});
