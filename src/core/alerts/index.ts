/**
 * The public surface of src/core/alerts: what other areas import from it. Import it from other areas
 * through this file only (lint rule `areas/index-only`, hack/eslint/areas.js); modules inside
 * src/core/alerts import one another directly.
 */
export { type Alert, ALERT_TYP, ALERT_TYPES, alertPayload, type AlertPayload, signAlert, type SignedAlert, verifyAlert } from "./alert.js";
export { WebhookError, type WebhookErrorCode } from "./errors.js";
