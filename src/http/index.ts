/**
 * The public surface of src/http: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/http import one another directly.
 */
export { isIpLiteral, type OutboundPolicy, STRICT_OUTBOUND } from "./outbound-address.js";
export { loadOutboundPolicy } from "./outbound-settings.js";
export { type OutboundDeps, OutboundError, outboundRequest } from "./outbound.js";
