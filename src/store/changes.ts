/**
 * Change notices on the NOTIFY channel `writ_changes`, sent by triggers
 * (migrations/0100_change_notify.sql) whenever a write changes what the data plane caches: an
 * agent's verify snapshot (src/verify/gather/candidate-cache.ts) or the credentials of API keys
 * (src/api/credential-cache.ts).
 *
 * Payloads: `agent:<agent_id>` and `keys`. Like every NOTIFY a notice is delivered only when
 * its transaction commits, only to sessions listening then, and is not durable: a cache must
 * drop everything when its listening connection is lost or re-made, and must not be used
 * while it is down.
 */

/** The NOTIFY channel of change notices. */
export const CHANGES_CHANNEL = "writ_changes";

/** What changed. */
export type ChangeNotice = { kind: "agent"; agentId: string } | { kind: "keys" };

const AGENT_PREFIX = "agent:";

/** Parses a `writ_changes` payload; undefined when it is not one. */
export function parseChangeNotice(payload: string | undefined): ChangeNotice | undefined {
  if (payload === "keys") return { kind: "keys" };
  if (payload?.startsWith(AGENT_PREFIX) && payload.length > AGENT_PREFIX.length) return { kind: "agent", agentId: payload.slice(AGENT_PREFIX.length) };
  return undefined;
}
