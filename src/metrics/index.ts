/**
 * The public surface of src/metrics: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/metrics import one another directly.
 */
export { type HealthServer, startHealthServer } from "./http-server.js";
export { registered } from "./registered.js";
