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
          exclude: [...configDefaults.exclude, "test/integration/**"],
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
    ],
  },
});
