/**
 * The webhook outbox table (`webhook_outbox`, migration 0040): enqueue, claim, finish.
 *
 * Promise: `enqueueAlert` writes in the CALLER's transaction (the alert exists iff the change
 * committed) at most one row per (subscription_id, event_id), and NOTIFYs `writ_webhooks` on
 * commit so a worker wakes at once. `claimDue` takes due rows with `FOR UPDATE SKIP LOCKED`
 * (any number of workers, in any number of processes, never claim the same row together) and
 * leases them: it counts the attempt and moves `next_attempt_at` past the lease, so a worker
 * that dies mid-delivery only delays the row until the lease ends. `finish*` act only while the
 * claim is still the current one (fenced by the attempt number). All times are the database's.
 */
import type { Pool } from "pg";
import { WebhookError, alertPayload, type Alert, type AlertPayload } from "../core/alerts/index.js";
import type { Queryable } from "./pool.js";

/** The NOTIFY channel that wakes delivery workers (payload empty). */
export const WEBHOOKS_CHANNEL = "writ_webhooks";

/** Where an alert goes: a subscription and the URL stored with it now. */
export interface AlertTarget {
  subscription_id: string;
  webhook_url: string;
}

/** Longest webhook URL accepted (characters). */
export const MAX_URL_LENGTH = 2048;

/**
 * Enqueues `alert` for `target` in the caller's transaction. Enqueuing the same event for the
 * same subscription again changes nothing. Throws WebhookError ALERT_INVALID for a malformed
 * alert or URL (the caller's transaction then fails unless it catches).
 */
export async function enqueueAlert(client: Queryable, target: AlertTarget, alert: Alert): Promise<void> {
  const url = typeof target?.webhook_url === "string" ? target.webhook_url : "";
  let parsed: URL | null = null;
  try {
    parsed = url.length <= MAX_URL_LENGTH ? new URL(url) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    throw new WebhookError("ALERT_INVALID", "webhook_url must be an http or https URL");
  }
  const payload = alertPayload(target.subscription_id, alert);
  const { rowCount } = await client.query(
    `INSERT INTO webhook_outbox (subscription_id, webhook_url, event_id, payload)
     VALUES ($1, $2, $3, $4::jsonb)
     ON CONFLICT (subscription_id, event_id) DO NOTHING`,
    [payload.subscription_id, url, payload.event_id, JSON.stringify(payload)],
  );
  if (rowCount === 1) await client.query("SELECT pg_notify($1, '')", [WEBHOOKS_CHANNEL]);
}

/** A claimed row: one attempt to make now. */
export interface ClaimedDelivery {
  id: string;
  webhookUrl: string;
  /**
   * Who the delivery is for: the subscribing organization (`org:<org_id>`), or, for a row whose
   * subscription is not in the registry, the subscription itself (`sub:<subscription_id>`).
   * Fairness counts per tenant first (src/webhooks/worker.ts).
   */
  tenant: string;
  /** `tenant` and the URL's host (without the port): what per-host limits count. */
  host: string;
  /** `tenant` and the URL's `host[:port]`: what per-destination limits count. */
  destination: string;
  eventId: string;
  payload: AlertPayload;
  /** The number of this attempt (1 for the first). */
  attempt: number;
}

/** Options of `claimDue`. */
export interface ClaimOptions {
  /** Destinations (`ClaimedDelivery.destination`) not to claim for now: their in-flight limit is reached. */
  skipDestinations?: readonly string[];
  /** Hosts (`ClaimedDelivery.host`) not to claim for now. */
  skipHosts?: readonly string[];
  /** Tenants (`ClaimedDelivery.tenant`) not to claim for now. */
  skipTenants?: readonly string[];
  /** How many of the earliest due rows are looked at (default 20 x `limit`). */
  window?: number;
}

/** A stored URL's `host[:port]` (stored URLs are normalized: `scheme://host[:port]/...`). */
const AUTHORITY = "split_part(o.webhook_url, '/', 3)";
/** The subscribing organization, else the subscription (a row whose subscription is not in the registry). */
const TENANT = "coalesce('org:' || s.org_id, 'sub:' || o.subscription_id)";
/** The URL's host without its port (`[::1]` keeps its brackets). */
const HOST = `regexp_replace(${AUTHORITY}, ':[0-9]*$', '')`;

/**
 * Claims up to `limit` due rows, leasing each for `leaseMs`: at most ONE row per (tenant, host)
 * per call and none for the skipped tenants, hosts and destinations, earliest due first, so
 * one organization with many due rows (on any number of ports or hosts) never fills a batch.
 */
export async function claimDue(pool: Pool, limit: number, leaseMs: number, opts: ClaimOptions = {}): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const { rows } = await pool.query<{
    id: string;
    webhook_url: string;
    tenant: string;
    host: string;
    destination: string;
    event_id: string;
    payload: AlertPayload;
    attempts: number;
  }>(
    `WITH candidates AS (
       SELECT id, next_attempt_at, tenant, tenant || '|' || host AS host, tenant || '|' || authority AS destination FROM (
         SELECT o.id, o.next_attempt_at, ${TENANT} AS tenant, ${HOST} AS host, ${AUTHORITY} AS authority
           FROM webhook_outbox o LEFT JOIN subscriptions s ON s.subscription_id = o.subscription_id
          WHERE o.next_attempt_at IS NOT NULL AND o.next_attempt_at <= now()) k
        WHERE tenant <> ALL($5::text[]) AND tenant || '|' || host <> ALL($6::text[]) AND tenant || '|' || authority <> ALL($3::text[])
        ORDER BY next_attempt_at
        LIMIT $4::int),
     firsts AS (
       SELECT DISTINCT ON (host) id, next_attempt_at, tenant, host, destination FROM candidates ORDER BY host, next_attempt_at),
     due AS (
       SELECT o.id, f.tenant, f.host, f.destination FROM webhook_outbox o JOIN firsts f ON f.id = o.id
        WHERE o.next_attempt_at IS NOT NULL AND o.next_attempt_at <= now()
        ORDER BY f.next_attempt_at
        LIMIT $1::int
        FOR UPDATE OF o SKIP LOCKED)
     UPDATE webhook_outbox o
        SET attempts = o.attempts + 1, next_attempt_at = now() + $2::double precision * interval '1 millisecond'
       FROM due WHERE o.id = due.id
     RETURNING o.id::text AS id, o.webhook_url, due.tenant, due.host, due.destination, o.event_id, o.payload, o.attempts`,
    [limit, leaseMs, opts.skipDestinations ?? [], opts.window ?? limit * 20, opts.skipTenants ?? [], opts.skipHosts ?? []],
  );
  return rows.map((r) => ({
    id: r.id,
    webhookUrl: r.webhook_url,
    tenant: r.tenant,
    host: r.host,
    destination: r.destination,
    eventId: r.event_id,
    payload: r.payload,
    attempt: r.attempts,
  }));
}

/** Records a successful attempt. Returns false when the claim was no longer current. */
export async function finishDelivered(db: Queryable, d: ClaimedDelivery): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_outbox SET delivered_at = now(), next_attempt_at = NULL, last_error = NULL
      WHERE id = $1 AND attempts = $2 AND next_attempt_at IS NOT NULL`,
    [d.id, d.attempt],
  );
  return rowCount === 1;
}

/**
 * Records a failed attempt: retry after `retryInMs`, or fail for good when it is null.
 * Returns false when the claim was no longer current.
 */
export async function finishFailed(db: Queryable, d: ClaimedDelivery, error: string, retryInMs: number | null): Promise<boolean> {
  const { rowCount } =
    retryInMs === null
      ? await db.query(
          `UPDATE webhook_outbox SET failed_at = now(), next_attempt_at = NULL, last_error = $3
            WHERE id = $1 AND attempts = $2 AND next_attempt_at IS NOT NULL`,
          [d.id, d.attempt, error],
        )
      : await db.query(
          `UPDATE webhook_outbox SET next_attempt_at = now() + $3::double precision * interval '1 millisecond', last_error = $4
            WHERE id = $1 AND attempts = $2 AND next_attempt_at IS NOT NULL`,
          [d.id, d.attempt, retryInMs, error],
        );
  return rowCount === 1;
}

/**
 * Gives a claimed row back without counting the attempt (an attempt interrupted by shutdown):
 * due now, for the next worker. Returns false when the claim was no longer current.
 */
export async function releaseClaim(db: Queryable, d: ClaimedDelivery): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_outbox SET attempts = attempts - 1, next_attempt_at = now(), last_error = 'delivery interrupted by shutdown'
      WHERE id = $1 AND attempts = $2 AND next_attempt_at IS NOT NULL`,
    [d.id, d.attempt],
  );
  return rowCount === 1;
}
