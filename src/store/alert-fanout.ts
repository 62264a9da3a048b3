/**
 * Alert fan-out after commit (table `alert_fanout`, migration 0120): the transaction that
 * raises an alert writes ONE row, however many subscriptions the agent has, so a report never
 * holds its locks while thousands of outbox rows are written; the rows are expanded after it
 * commits.
 *
 * Promises:
 * - `enqueueFanout` writes in the CALLER's transaction (the fan-out exists iff the change
 *   committed), checks the alert as `enqueueAlert` would (WebhookError ALERT_INVALID) and
 *   NOTIFYs `writ_webhooks` on commit.
 * - `expandFanouts` turns pending fan-outs into one outbox row per subscription active at
 *   expansion time (`alertSubscribers`), deleting each fan-out in the same transaction: a
 *   fan-out is expanded exactly once, even by several expanders at once (`SKIP LOCKED`), and
 *   a crash before or during expansion leaves it pending. The writer expands its own at once
 *   after commit; every delivery worker expands whatever is pending on each round (recovery).
 */
import type { Pool } from "pg";
import { alertPayload, type Alert } from "../core/alerts/index.js";
import { withTransaction, type Queryable } from "./pool.js";
import { alertSubscribers } from "./subscriptions.js";
import { WEBHOOKS_CHANNEL } from "./webhook-outbox.js";

/** A subscription id that only serves to check an alert before any subscription is known. */
const CHECK_ONLY_SUBSCRIPTION = "sub_000000000000000000000000";

/** Writes one fan-out of `alert` to the subscribers of `agentId` in `client`'s transaction; its id. */
export async function enqueueFanout(client: Queryable, agentId: string, alert: Alert): Promise<string> {
  const { subscription_id: _check, svc_bureau_alert: _v, ...checked } = alertPayload(CHECK_ONLY_SUBSCRIPTION, alert);
  const { rows } = await client.query<{ id: string }>("INSERT INTO alert_fanout (agent_id, alert) VALUES ($1, $2::jsonb) RETURNING id::text AS id", [
    agentId,
    JSON.stringify(checked),
  ]);
  await client.query("SELECT pg_notify($1, '')", [WEBHOOKS_CHANNEL]);
  return (rows[0] as { id: string }).id;
}

/** What an expansion did. */
export interface Expanded {
  /** Fan-outs expanded (and deleted). */
  fanouts: number;
  /** Outbox rows written (one per active subscription). */
  alerted: number;
}

/**
 * Expands pending fan-outs: the oldest `limit` (default 100), skipping those another expander
 * holds; or exactly `ids`, waiting for another expander that holds one (so when this returns,
 * their outbox rows are committed, whoever wrote them).
 */
export async function expandFanouts(pool: Pool, opts: { ids?: readonly string[]; limit?: number } = {}): Promise<Expanded> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ agent_id: string; alert: Alert }>(
      `DELETE FROM alert_fanout WHERE id IN (
         SELECT id FROM alert_fanout WHERE $1::bigint[] IS NULL OR id = ANY($1::bigint[])
          ORDER BY id LIMIT $2::int FOR UPDATE${opts.ids ? "" : " SKIP LOCKED"})
       RETURNING agent_id, alert`,
      [opts.ids ?? null, opts.limit ?? 100],
    );
    let alerted = 0;
    for (const r of rows) alerted += await alertSubscribers(client, r.agent_id, r.alert);
    return { fanouts: rows.length, alerted };
  });
}
