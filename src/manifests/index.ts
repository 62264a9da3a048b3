/**
 * The public surface of src/manifests: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/manifests import one another directly.
 */
export { renderSamples } from "./samples.js";
export { toKubeYaml } from "./yaml.js";
