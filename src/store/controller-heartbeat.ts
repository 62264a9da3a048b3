/**
 * The controller's heartbeat in Postgres (table `controller_heartbeats`, one row per Lease):
 * how far it has observed the cluster, and whether it reaches the API server. Written by the
 * replica that leads (it takes the row over) or led last (it updates only a row it holds, so a
 * paused former leader never overwrites the new one); read by the data plane, which trusts it
 * for revocation state while its own watch is down (src/verify/revocation/controller-path.ts).
 *
 * Every instant is taken on the database's clock (`now()`), and readings come back as ages, so
 * the controller's and the data plane's clocks never need to agree.
 */
import type { Queryable } from "./pool.js";

/** What the controller writes. */
export interface HeartbeatWrite {
  lease: string;
  identity: string;
  /** How long ago (ms, on the writer's clock) everything it had observed was processed. */
  observedLagMs: number;
  apiReachable: boolean;
  /** Take the row over (the leader); otherwise only a row `identity` holds is updated. */
  takeOver: boolean;
}

/** What the data plane reads: ages on the database's clock. */
export interface HeartbeatReading {
  lease: string;
  identity: string;
  /** ms since the row was written. */
  writtenAgeMs: number;
  /** ms since the instant up to which everything observed was processed. */
  observedAgeMs: number;
  apiReachable: boolean;
}

/** Writes a heartbeat; true when a row was written (false: another replica holds it). */
export async function writeHeartbeat(q: Queryable, h: HeartbeatWrite): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO controller_heartbeats AS h (lease, identity, observed_at, api_reachable, written_at)
     VALUES ($1, $2, now() - make_interval(secs => $3::double precision / 1000), $4, now())
     ON CONFLICT (lease) DO UPDATE SET identity = EXCLUDED.identity, observed_at = EXCLUDED.observed_at,
       api_reachable = EXCLUDED.api_reachable, written_at = EXCLUDED.written_at
     WHERE $5::boolean OR h.identity = EXCLUDED.identity`,
    [h.lease, h.identity, Math.max(0, h.observedLagMs), h.apiReachable, h.takeOver],
  );
  return (rowCount ?? 0) > 0;
}

/** The heartbeat of `lease`, or (lease undefined) the most recently written one. */
export async function readHeartbeat(q: Queryable, lease?: string): Promise<HeartbeatReading | undefined> {
  const { rows } = await q.query<{ lease: string; identity: string; written_age_ms: number; observed_age_ms: number; api_reachable: boolean }>(
    `SELECT lease, identity, api_reachable,
            (extract(epoch FROM now() - written_at) * 1000)::float8 AS written_age_ms,
            (extract(epoch FROM now() - observed_at) * 1000)::float8 AS observed_age_ms
     FROM controller_heartbeats WHERE $1::text IS NULL OR lease = $1
     ORDER BY written_at DESC LIMIT 1`,
    [lease ?? null],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    lease: r.lease,
    identity: r.identity,
    writtenAgeMs: Math.max(0, r.written_age_ms),
    observedAgeMs: Math.max(0, r.observed_age_ms),
    apiReachable: r.api_reachable,
  };
}
