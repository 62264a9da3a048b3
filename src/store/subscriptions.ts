/**
 * Subscriptions to an agent's alerts (table `subscriptions`, migrations/0030_registry.sql) and
 * the fan-out of one alert to every active subscription of an agent.
 *
 * Promise: one organization holds at most one active subscription per (agent, webhook URL): a
 * repeat returns the existing one; `subscribeWithinCap` also holds it to a number of active
 * subscriptions (BUR_MAX_SUBSCRIPTIONS_PER_ORG). `alertSubscribers` enqueues, in the caller's transaction,
 * one outbox row per active subscription for ONE event (one `event_id`), through
 * `enqueueAlert` (./webhook-outbox.ts); the alert is therefore sent only if the caller commits.
 */
import { randomBytes } from "node:crypto";
import { formatId, ID_RANDOM_BYTES } from "../core/registry/index.js";
import type { Alert } from "../core/alerts/index.js";
import type { Pool } from "pg";
import { withTransaction, type Queryable } from "./pool.js";
import { enqueueAlert } from "./webhook-outbox.js";

/** A subscription. */
export interface Subscription {
  subscription_id: string;
  org_id: string;
  agent_id: string;
  webhook_url: string;
  /** RFC 3339, UTC. */
  created_at: string;
  active: boolean;
}

interface Row {
  subscription_id: string;
  org_id: string;
  agent_id: string;
  webhook_url: string;
  created_at: Date;
  active: boolean;
}

const COLUMNS = "subscription_id, org_id, agent_id, webhook_url, created_at, active";

function toSubscription(r: Row): Subscription {
  return { ...r, created_at: r.created_at.toISOString() };
}

/**
 * Subscribes `org_id` to alerts on `agent_id` at `webhook_url` (already checked), at `now`;
 * `created` is false when the same active subscription already existed (it is returned).
 */
export async function createSubscription(
  q: Queryable,
  input: { org_id: string; agent_id: string; webhook_url: string },
  now: Date,
): Promise<{ subscription: Subscription; created: boolean }> {
  const id = formatId("subscription", randomBytes(ID_RANDOM_BYTES));
  const inserted = await q.query<Row>(
    `INSERT INTO subscriptions (subscription_id, org_id, agent_id, webhook_url, created_at, active) VALUES ($1, $2, $3, $4, $5, true)
     ON CONFLICT (org_id, agent_id, webhook_url) WHERE active DO NOTHING RETURNING ${COLUMNS}`,
    [id, input.org_id, input.agent_id, input.webhook_url, now],
  );
  if (inserted.rows[0]) return { subscription: toSubscription(inserted.rows[0]), created: true };
  const existing = await q.query<Row>(`SELECT ${COLUMNS} FROM subscriptions WHERE org_id = $1 AND agent_id = $2 AND webhook_url = $3 AND active`, [
    input.org_id,
    input.agent_id,
    input.webhook_url,
  ]);
  const row = existing.rows[0];
  // The conflicting row was deactivated between the two statements: try once more.
  if (!row) return createSubscription(q, input, now);
  return { subscription: toSubscription(row), created: false };
}

/** What `subscribeWithinCap` did. */
export type CappedSubscribe = { ok: true; subscription: Subscription; created: boolean } | { ok: false; cap: number };

/**
 * `createSubscription` under a cap of `cap` active subscriptions per organization: the
 * organization's row is locked, so concurrent requests cannot pass the cap together. A repeat
 * of an active subscription is answered as before (never refused); a new one past the cap is
 * `{ok: false}` and nothing is written.
 */
export async function subscribeWithinCap(
  pool: Pool,
  input: { org_id: string; agent_id: string; webhook_url: string },
  now: Date,
  cap: number,
): Promise<CappedSubscribe> {
  return withTransaction(pool, async (client) => {
    await client.query("SELECT 1 FROM orgs WHERE org_id = $1 FOR UPDATE", [input.org_id]);
    const { rows } = await client.query<{ n: number; same: boolean }>(
      "SELECT count(*)::int AS n, bool_or(agent_id = $2 AND webhook_url = $3) AS same FROM subscriptions WHERE org_id = $1 AND active",
      [input.org_id, input.agent_id, input.webhook_url],
    );
    const r = rows[0];
    if (r && !r.same && r.n >= cap) return { ok: false, cap };
    return { ok: true, ...(await createSubscription(client, input, now)) };
  });
}

/** The active subscriptions of organization `orgId`, oldest first. */
export async function listSubscriptions(q: Queryable, orgId: string): Promise<Subscription[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM subscriptions WHERE org_id = $1 AND active ORDER BY created_at, subscription_id`, [orgId]);
  return rows.map(toSubscription);
}

/** Deactivates subscription `subscriptionId` of `orgId`; undefined when the organization has no such subscription. */
export async function deactivateSubscription(q: Queryable, orgId: string, subscriptionId: string): Promise<Subscription | undefined> {
  const { rows } = await q.query<Row>(`UPDATE subscriptions SET active = false WHERE org_id = $1 AND subscription_id = $2 RETURNING ${COLUMNS}`, [
    orgId,
    subscriptionId,
  ]);
  return rows[0] ? toSubscription(rows[0]) : undefined;
}

/** The active subscriptions on agent `agentId`. */
export async function activeSubscriptionsFor(q: Queryable, agentId: string): Promise<Subscription[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM subscriptions WHERE agent_id = $1 AND active ORDER BY subscription_id`, [agentId]);
  return rows.map(toSubscription);
}

/** A fresh alert event id: `evt_` + 24 hex. */
export function newEventId(): string {
  return formatId("event", randomBytes(ID_RANDOM_BYTES));
}

/**
 * Enqueues `alert` (one event) for every active subscription on `agentId`, in the caller's
 * transaction on `client`. Returns the number of subscriptions alerted.
 */
export async function alertSubscribers(client: Queryable, agentId: string, alert: Alert): Promise<number> {
  const subs = await activeSubscriptionsFor(client, agentId);
  for (const s of subs) await enqueueAlert(client, { subscription_id: s.subscription_id, webhook_url: s.webhook_url }, alert);
  return subs.length;
}
