// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import writ from "./hack/eslint/layers.js";
import areas from "./hack/eslint/areas.js";

export default tseslint.config(
  { ignores: ["node_modules/", ".writ/", ".scratch/", "coverage/", "charts/", "crds/", "dist/", "docs/.vitepress/cache/", "docs/.vitepress/dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
    },
  },
  {
    // One-way dependencies between the top folders of src/ (the table: hack/eslint/layers.js).
    files: ["src/**/*.ts"],
    plugins: { writ },
    rules: { "writ/layers": "error" },
  },
  {
    // Imports across areas go through the area's index.ts (hack/eslint/areas.js).
    files: ["src/**/*.ts"],
    plugins: { areas },
    rules: { "areas/index-only": "error" },
  },
  {
    // The portal's browser scripts (served as they are, no build step).
    files: ["src/api/routes/portal/static/*.js", "src/api/routes/approvals/static/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: Object.fromEntries(
        ["document", "window", "location", "history", "sessionStorage", "fetch", "URL", "URLSearchParams", "Node", "Date", "Map"].map((name) => [
          name,
          "readonly",
        ]),
      ),
    },
  },
  {
    files: ["bin/**/*.mjs", "eslint.config.js", "hack/eslint/**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
