/**
 * Metrics of webhook delivery: `writ_webhook_deliveries_total{result}`, one count per finished
 * attempt, where result is `delivered` (2xx), `retry` (failed, another attempt is scheduled)
 * or `failed` (failed and no attempt is left; the row is given up).
 *
 * Promise: registering twice on the same registry (two workers in one process) reuses the one
 * counter instead of throwing.
 */
import { Counter, type Registry } from "prom-client";
import { registered } from "../metrics/index.js";

/** The `result` label values. */
export type DeliveryResult = "delivered" | "retry" | "failed";

/** The metric name. */
export const DELIVERIES_METRIC = "writ_webhook_deliveries_total";

/** The counter on `registry` (created on first use), or a private one when no registry is given. */
export function deliveriesCounter(registry?: Registry): Counter<"result"> {
  return registered(
    registry,
    DELIVERIES_METRIC,
    (registers) =>
      new Counter({
        name: DELIVERIES_METRIC,
        help: "Webhook delivery attempts by result (delivered, retry, failed = given up).",
        labelNames: ["result"] as const,
        registers,
      }),
  );
}
