/**
 * vitest globalSetup of the integration project: ONE Postgres for the whole run.
 *
 * With DATABASE_URL set, that server is used (its user must be allowed to CREATE DATABASE).
 * Otherwise an embedded Postgres is started on a free port with its data in a fresh temp
 * folder (fsync off: test data is disposable) and removed at the end. Test files get the admin
 * URL through `inject("pgAdminUrl")` and create their own database (see ./pg.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "../../src/dev/free-port.js";
import { newPassword, startPostgres } from "../../src/dev/postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a database on the test server whose user may CREATE DATABASE. */
    pgAdminUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const external = process.env.DATABASE_URL?.trim();
  if (external) {
    project.provide("pgAdminUrl", external);
    return;
  }
  const dataDir = await mkdtemp(join(tmpdir(), "writ-test-pg-"));
  const pg = await startPostgres({
    dataDir,
    port: await freePort(),
    password: newPassword(),
    serverSettings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "300" },
  });
  project.provide("pgAdminUrl", pg.url("postgres"));
  return async () => {
    await pg.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
