import { configDefaults, defineConfig } from "vitest/config";

// Two projects: `unit` (everything outside test/integration) runs without a database;
// `integration` gets ONE Postgres for the run from its globalSetup (embedded, or DATABASE_URL),
// started only when integration files are selected.
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
