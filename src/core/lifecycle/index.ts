/**
 * The public surface of src/core/lifecycle: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/core/lifecycle import one another directly.
 */
export { StopGroup } from "./stop-group.js";
