/**
 * A sub-delegation evaluated against the delegations its chain cites AS STORED, never against
 * the copies its record carries (docs/threat-model/chains.md).
 *
 * Promises:
 * - Only for a delegation with a chain: a direct grant is returned as it is, with no statement
 *   and no allocation (the hot path).
 * - One statement reads the heads (generation, organization, revocation) of the delegation and
 *   of every link it cites within its organization (an id names a link only there), as of now; records come from the record cache by generation (read
 *   only for misses), so a change of an ancestor (narrowed, shortened, revoked) is seen by the
 *   next verify of every delegation below it, whatever the agent's snapshot holds.
 * - The result is core `withStoredChain`: links not stored, of another organization, filed
 *   under other ancestors or naming another root principal break the chain (CHAIN_BROKEN); a
 *   delegation wider than its stored parent is CHAIN_SCOPE_WIDENED; a stored ancestor's
 *   revocation or expiry invalidates it (CHAIN_LINK_REVOKED, CHAIN_LINK_EXPIRED), and a
 *   stored ancestor's suspension suspends it (DELEGATION_SUSPENDED).
 * - Budgets: the spend transaction re-checks every stored ancestor's cumulative maximum under
 *   its lock (src/store/ledger/spend.ts); nothing here is trusted for that.
 */
import { withStoredChain, type PreparedDelegationWithProblems, type StoredAncestor } from "../../core/delegation/index.js";
import { loadChainHeads, loadDelegationRecords, type Queryable } from "../../store/index.js";
import { recordKey, type RecordCache } from "../caches/record-cache.js";

/** `prepared` (a candidate's delegation) with its chain read from the store; see the module comment. */
export async function withStoredAncestors(
  db: Queryable,
  cache: RecordCache,
  prepared: PreparedDelegationWithProblems,
): Promise<PreparedDelegationWithProblems> {
  const links = prepared.delegation.delegation_chain;
  if (links.length === 0) return prepared;
  const selfId = prepared.delegation.delegation_id;
  const ids = links.map((l) => l.delegation_id);
  const heads = new Map((await loadChainHeads(db, prepared.delegation.agent.agent_id, selfId, ids)).map((h) => [h.delegationId, h]));
  const misses = ids.flatMap((id) => {
    const h = heads.get(id);
    return h !== undefined && !cache.hasDelegation(recordKey(h.agentId, id), h.generation) ? [h] : [];
  });
  const fetched = new Map(
    (
      await loadDelegationRecords(
        db,
        misses.map((h) => h.agentId),
        misses.map((h) => h.delegationId),
      )
    ).map((r) => [r.delegationId, r]),
  );
  const ancestors = await Promise.all(
    ids.map(async (id): Promise<StoredAncestor | undefined> => {
      const h = heads.get(id);
      if (!h) return undefined;
      const f = fetched.get(id);
      const p = await cache.delegation(recordKey(h.agentId, id), f?.generation ?? h.generation, async () => {
        const record = f?.record ?? (await loadDelegationRecords(db, [h.agentId], [id]))[0]?.record;
        if (!record) throw new Error(`delegation ${id} disappeared between two reads`);
        return record;
      });
      return { delegation: p.delegation, orgId: h.orgId, revoked: h.revoked };
    }),
  );
  const org = heads.get(selfId)?.orgId ?? null;
  return { ...withStoredChain(prepared, org, ancestors), problems: prepared.problems };
}
