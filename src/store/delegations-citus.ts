/**
 * The delegation writes of ./delegations.ts on a Citus cluster (docs/scale.md, "Change notices
 * from workers"), where the plain statements are refused or cannot commit:
 *
 * - A revocation writes the markers (`delegation_revocations`, a reference table: every node)
 *   and delegation rows of any agent in one transaction, which Citus commits in two phases, and
 *   Postgres refuses to PREPARE a transaction that sent a NOTIFY. So while ./delegations.ts
 *   writes delegations on Citus (`withNoticesHere`), the per-agent tables' triggers
 *   (sql/functions/writ_delegations_changed.sql, writ_agents_changed.sql) send nothing: the
 *   setting `writ.notices_from = 'coordinator'` is SET LOCAL on the coordinator and propagated
 *   by Citus to the transaction's worker connections (`citus.propagate_set_commands = local`),
 *   and the writer sends each written row's notice `agent:<agent_id>` from the coordinator's
 *   session (`notifyAgentsHere`), which commits after the workers' PREPARE and is never
 *   prepared itself. The setting is cleared again before the writer returns, so a later write
 *   of the same transaction notifies as usual.
 * - `markRevokedCitus` finds the subtree level by level (Citus refuses a recursive statement
 *   without a filter on the distribution column): the id and the rows whose chain names it,
 *   then, by parent, the children of each level, as the plain statement's recursion does, all
 *   within the organization; then marks each row by its key (agent_id, delegation_id), one
 *   statement per row in the spend transaction's lock order (depth, id), and records the markers.
 *
 * Plain Postgres never runs any of it: ./delegations.ts learns that the database is a Citus
 * cluster's from its tree lock's statement (the Citus catalog is there), as the SQL functions'
 * `*_citus` branches do.
 */
import { CHANGES_CHANNEL } from "./changes.js";
import type { Queryable } from "./pool.js";

/** What the tree lock's statement selects beside the lock: whether the Citus catalog is there. */
export const CITUS_CATALOG_SQL = "to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL AS citus";

/** Whether `q`'s database is a Citus cluster's (its catalog is there). */
export async function onCitus(q: Queryable): Promise<boolean> {
  return (await q.query<{ citus: boolean }>(`SELECT ${CITUS_CATALOG_SQL}`)).rows[0]?.citus === true;
}

/**
 * Runs `fn` with the per-agent tables' triggers silent (see the module comment); `fn` adds the
 * agents whose rows it writes to `agents`, each notified from this session. When `fn` throws,
 * the setting is cleared and the notices sent as far as the transaction still takes
 * statements (an aborted one commits nothing, so it needs none), and the error is rethrown.
 */
export async function withNoticesHere<T>(q: Queryable, fn: (agents: Set<string>) => Promise<T>): Promise<T> {
  const agents = new Set<string>();
  const done = () => q.query("SET LOCAL writ.notices_from = ''; SET LOCAL citus.propagate_set_commands TO DEFAULT").then(() => notifyAgentsHere(q, agents));
  await q.query("SET LOCAL citus.propagate_set_commands = 'local'; SET LOCAL writ.notices_from = 'coordinator'");
  let out: T;
  try {
    out = await fn(agents);
  } catch (e) {
    await done().catch(() => {});
    throw e;
  }
  await done();
  return out;
}

/**
 * `write()` for agent `agentId`'s rows: when `needed` and on a Citus cluster, with the row's
 * change notice sent from this session (`withNoticesHere`; a write that may commit in two
 * phases, which a worker's NOTIFY makes fail), else as it is.
 */
export async function notifiedHereOnCitus<T>(q: Queryable, needed: boolean, agentId: string, write: () => Promise<T>): Promise<T> {
  if (!needed || !(await onCitus(q))) return write();
  return withNoticesHere(q, (agents) => {
    agents.add(agentId);
    return write();
  });
}

/** Sends `agent:<id>` on writ_changes for each of `agents` from this session (when the transaction commits). */
export async function notifyAgentsHere(q: Queryable, agents: Iterable<string>): Promise<void> {
  const list = [...new Set(agents)].sort();
  if (list.length === 0) return;
  await q.query("SELECT pg_notify($1, 'agent:' || a) FROM unnest($2::text[]) AS a", [CHANGES_CHANNEL, list]);
}

/** Who revoked, why and when (./delegations.ts RevocationActs). */
interface Acts {
  reason: string;
  by: string;
  at: Date;
}

interface SubtreeRow {
  agent_id: string;
  delegation_id: string;
  depth: number;
  revoked: boolean;
}

/**
 * The revocation of `id` and its subtree within the organization `scope` ('' for none) on
 * Citus (see the module comment): the ids newly revoked or recorded, whether the id was known,
 * and the agents whose rows it marked.
 */
export async function markRevokedCitus(q: Queryable, scope: string, id: string, acts: Acts): Promise<{ ids: string[]; found: boolean; agents: string[] }> {
  const cols = "agent_id, delegation_id, cardinality(chain_ids) AS depth, revoked_at IS NOT NULL AS revoked";
  const sub = new Map<string, SubtreeRow>();
  const expanded = new Set<string>();
  let level = (
    await q.query<SubtreeRow>(`SELECT ${cols} FROM delegations WHERE (delegation_id = $1 OR chain_ids @> ARRAY[$1::text]) AND coalesce(org_id, '') = $2`, [
      id,
      scope,
    ])
  ).rows;
  while (level.length > 0) {
    for (const r of level) sub.set(`${r.agent_id}\u0000${r.delegation_id}`, r);
    const parents = [...new Set(level.map((r) => r.delegation_id))].filter((p) => !expanded.has(p));
    for (const p of parents) expanded.add(p);
    if (parents.length === 0) break;
    level = (
      await q.query<SubtreeRow>(`SELECT ${cols} FROM delegations WHERE parent_delegation_id = ANY($1::text[]) AND coalesce(org_id, '') = $2`, [parents, scope])
    ).rows.filter((r) => !sub.has(`${r.agent_id}\u0000${r.delegation_id}`));
  }
  const found = sub.size > 0 || (await q.query("SELECT 1 FROM delegation_revocations WHERE org_id = $1 AND delegation_id = $2", [scope, id])).rows.length > 0;
  // Each row by its key, in the order the spend transaction locks delegation rows: depth, then id.
  const pending = [...sub.values()]
    .filter((r) => !r.revoked)
    .sort((a, b) => a.depth - b.depth || cmp(a.delegation_id, b.delegation_id) || cmp(a.agent_id, b.agent_id));
  const marked: string[] = [];
  const agents: string[] = [];
  for (const r of pending) {
    const { rows } = await q.query<{ delegation_id: string }>(
      `UPDATE delegations SET status = 'revoked', revoked_at = $3, revoked_reason = $4, revoked_by = $5,
         record = jsonb_set(record, '{status}', '"revoked"'), generation = generation + 1, updated_at = now()
       WHERE agent_id = $1 AND delegation_id = $2 AND revoked_at IS NULL RETURNING delegation_id`,
      [r.agent_id, r.delegation_id, acts.at, acts.reason, acts.by],
    );
    if (rows.length > 0) {
      marked.push(r.delegation_id);
      agents.push(r.agent_id);
    }
  }
  const record = [...new Set([...(found ? [id] : []), ...marked])];
  const recorded =
    record.length === 0
      ? []
      : (
          await q.query<{ delegation_id: string }>(
            `INSERT INTO delegation_revocations (org_id, delegation_id, revoked_at, reason, revoked_by, root_id)
             SELECT $1, x, $3, $4, $5, $6 FROM unnest($2::text[]) AS x
             ON CONFLICT (org_id, delegation_id) DO NOTHING RETURNING delegation_id`,
            [scope, record, acts.at, acts.reason, acts.by, id],
          )
        ).rows.map((r) => r.delegation_id);
  return { ids: [...new Set([...recorded, ...marked])].sort(), found, agents };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
