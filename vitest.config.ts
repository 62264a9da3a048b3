import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

// Suites of the store that also run on a real Citus cluster (test/helpers/pg.ts: with
// WRIT_TEST_CITUS=1 each file gets a coordinator and two workers): the statements Citus routes,
// refuses or commits in two phases where one Postgres does not (docs/scale.md). Only where Citus
// is installed or its source is there to build it (hack/citus/provision.sh; .ci/run builds it).
const CITUS_SUITES = [
  "agreements-store",
  "agreements-store-revocation",
  "ack-parties",
  "chain-spend-totals",
  "delegation-chain-budget",
  "delegation-revoke",
  "mandates",
  "period-holds",
  "period-limits",
  "scoped-ids",
  "spend",
  "verify-holds",
  "verify-outcomes",
].map((f) => `test/integration/${f}.test.ts`);
const citusSource = process.env.WRIT_CITUS_SOURCE ?? fileURLToPath(new URL("../shared/engines/citus", import.meta.url));
const citus = existsSync(`${citusSource}/citus-13.2.2.tar.gz`) || existsSync("/usr/lib/postgresql/15/lib/citus.so");

// Projects: `unit` (everything outside test/integration) runs without a database;
// `integration` gets ONE Postgres for the run from its globalSetup (embedded, or DATABASE_URL),
// started only when integration files are selected; `integration-citus` runs CITUS_SUITES again
// on Citus clusters; `e2e` adds a real kube-apiserver.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/integration/**", "test/e2e/**"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/helpers/pg-global-setup.ts"],
        },
      },
      ...(citus
        ? [
            {
              extends: true as const,
              test: { name: "integration-citus", include: CITUS_SUITES, env: { WRIT_TEST_CITUS: "1" } },
            },
          ]
        : []),
      {
        extends: true,
        test: {
          // A real kube-apiserver + etcd (hack/envtest/provision.sh builds them once, ~7 min on a
          // fresh machine, then cached outside the repository) and, where needed, Postgres.
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/helpers/pg-global-setup.ts"],
          hookTimeout: 40 * 60_000,
          testTimeout: 120_000,
        },
      },
    ],
  },
});
