/**
 * The public surface of src/retention: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/retention import one another directly.
 */
export { default as retentionPlugin } from "./plugin.js";
export { loadRetentionSettings, type RetentionSettings } from "./settings.js";
