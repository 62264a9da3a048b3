/**
 * Signed subscriber webhooks with a durable outbox: the public surface.
 *
 * - `enqueueAlert(client, target, alert)`: call INSIDE the transaction that records the change
 *   (revocation, incident, score drop), once per subscription; the alert is sent iff it commits.
 * - `startDeliveryWorker(pool, signer, opts)`: sends due alerts (the app starts one, see plugin.ts).
 * - `verifyAlert(body, publicJwk)`: for receivers and tests.
 * Wire format and delivery rules: docs/webhooks.md. The alert's shape and signature are pure
 * (src/core/alerts); the outbox table and its wake-up channel are the store's
 * (src/store/webhook-outbox.ts, src/store/webhook-wakeup.ts); this folder delivers.
 */
export { ALERT_TYP, ALERT_TYPES, alertPayload, signAlert, verifyAlert } from "../core/alerts/index.js";
export type { Alert, AlertPayload, SignedAlert } from "../core/alerts/index.js";
export { DEFAULT_RETRY_POLICY, baseDelay, nextRetryDelay, type RetryPolicy } from "./backoff.js";
export { ATTEMPT_HEADER, EVENT_ID_HEADER } from "./deliver.js";
export { WebhookError, type WebhookErrorCode } from "../core/alerts/index.js";
export { DELIVERIES_METRIC } from "./metrics.js";
export { enqueueAlert, WEBHOOKS_CHANNEL, type AlertTarget } from "../store/index.js";
export { startDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions, type WorkerLog } from "./worker.js";
export { default as webhooksPlugin } from "./plugin.js";
export { loadWebhookSettings, type WebhookSettings } from "./settings.js";
