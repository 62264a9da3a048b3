/**
 * Stored delegations (table `delegations`, migrations/0060_agreements.sql) and their
 * revocation.
 *
 * Promises:
 * - `upsertDelegation` stores the record (schema-checked) without its `intent_agreement`,
 *   which it stores through `upsertAgreement`, bound to the delegation. `generation` increases
 *   only when something stored changes, so re-applying the same record keeps caches warm.
 *   The row is keyed `(agent_id, delegation_id)`; the id is claimed in `record_ids`
 *   (./record-ids.ts) within the record's organization when first stored, and a stored delegation's agent never changes (a
 *   record naming another agent: RECORD_INVALID). A chain's links' agents are stored with it
 *   (`chain_agents`), so the spend transaction addresses every ancestor by its key.
 * - Revocation is final and reaches everything below, within one organization (an id names a
 *   record within its organization; docs/scale.md, "Organization-scoped ids"):
 *   `revokeDelegation` marks the id and every stored delegation of that organization whose
 *   chain names it or whose parent is revoked, records every id in `delegation_revocations`
 *   under the organization (also an id known only as a link of a stored chain, or not stored
 *   yet) and announces them on `writ_revocations` with the organization, all in the caller's
 *   transaction. A delegation stored later in that organization under a revoked link, or
 *   re-applied after its own revocation, is stored revoked. A chain's links are read in the
 *   child's organization only.
 * - Upserts and revocations of delegations serialise on one advisory lock (shared for upserts,
 *   exclusive for revocations), so a child stored while its parent is revoked is never missed.
 * - On a Citus cluster (the tree lock's statement says so) the subtree is written row by row
 *   by key, and the rows' change notices come from the coordinator's session
 *   (./delegations-citus.ts); plain Postgres runs the statements below.
 * - A record with a chain stores the agent of each stored link (`chain_agents`); an ancestor's
 *   cumulative total is its whole subtree's spend, its descendants' kept as a running total on
 *   its own row key (./ledger/chain-spend.ts: a child re-declared under other stored links
 *   moves its agreements' totals). The store does not judge the chain: what a link cites is read from the
 *   store at evaluation (`loadChainHeads`, core `withStoredChain`) and by the controller
 *   (`loadStoredChain`) before it stores a declaration.
 *
 * The store does not check `revocable`: whether a principal may revoke is decided at the edge.
 * Every function runs its statements on the given client: call it inside a transaction
 * (`withTransaction`).
 */
import type { Delegation, StoredAncestor } from "../core/delegation/index.js";
import { canonicalJson } from "../core/canonical/index.js";
import { validate } from "../core/schemas/index.js";
import { upsertAgreement, type UpsertAgreementResult } from "./agreements.js";
import { moveChainSpend } from "./ledger/chain-spend.js";
import { LOCK_IDS, WRIT_LOCK_NAMESPACE } from "./locks.js";
import type { Queryable } from "./pool.js";
import { RecordStoreError } from "./record-errors.js";
import { claimRecordId, moveRecordId, recordIdHolder } from "./record-ids.js";
import { CITUS_CATALOG_SQL, markRevokedCitus, withNoticesHere } from "./delegations-citus.js";
import { announceRevoked, MAX_ID_LENGTH } from "./revocation/announce.js";

/**
 * Advisory lock id of the delegation tree (in the `WRIT_LOCK_NAMESPACE` class), between
 * `revocations` (10) and `transparencyLog` (20) in the lock order. To be moved into LOCK_IDS.
 */
export const DELEGATION_TREE_LOCK_ID = LOCK_IDS.delegationTree;

/** Who revoked, why and when. */
export interface RevocationActs {
  reason: string;
  /** Who revoked: "principal", "policy", "service", "controller", an operator id... */
  by: string;
  at: Date;
}

/** Options of `upsertDelegation`. */
export interface UpsertDelegationOptions {
  /** The tenant. Undefined keeps the stored value (null for a new row). */
  orgId?: string | null;
  /** Time of a revocation this upsert causes (default: now). */
  at?: Date;
  /**
   * Set only by `recordMandate` (./mandates.ts): the delegation a verified payment mandate
   * became. Without it, the id of a recorded mandate is refused (RECORD_INVALID), so a declared
   * record can never replace one.
   */
  recordsMandate?: boolean;
  /** Set by the retry after a concurrent store of the same id (internal). */
  claimedBefore?: boolean;
}

/** What `upsertDelegation` did. */
export interface UpsertDelegationResult {
  delegationId: string;
  generation: number;
  created: boolean;
  changed: boolean;
  /** The stored delegation is revoked (now or before). */
  revoked: boolean;
  /**
   * The revocation this call made, when it made one: the ids it newly revoked (this one and
   * everything below), the acts, and `declared`: true when the record's own status caused it,
   * false when an earlier revocation of it or of a link above it did. Absent when nothing was
   * newly revoked, so a re-apply never reports it twice.
   */
  revocation?: RevokeResult & RevocationActs & { declared: boolean };
  /** The outcome for the embedded `intent_agreement`, when the record carried one. */
  agreement?: UpsertAgreementResult;
}

/** The outcome of a revocation: ids newly revoked, and whether the id was known at all. */
export interface RevokeResult {
  /** Ids revoked by this call (empty when everything was already revoked). */
  ids: string[];
  /** False when the id is neither stored, nor a link of a stored chain, nor revoked before. */
  found: boolean;
}

interface StoredRow {
  generation: string;
  agent_id: string;
  chain_agents: (string | null)[];
  record: unknown;
  org_id: string | null;
  revoked_at: Date | null;
}

/** The tree lock; true on a Citus cluster (read in the same statement: ./delegations-citus.ts). */
const lockShared = async (q: Queryable) =>
  (
    await q.query<{ citus: boolean }>(`SELECT pg_advisory_xact_lock_shared($1::int, $2::int), ${CITUS_CATALOG_SQL}`, [
      WRIT_LOCK_NAMESPACE,
      DELEGATION_TREE_LOCK_ID,
    ])
  ).rows[0]?.citus === true;
const lockExclusive = async (q: Queryable) =>
  (await q.query<{ citus: boolean }>(`SELECT pg_advisory_xact_lock($1::int, $2::int), ${CITUS_CATALOG_SQL}`, [WRIT_LOCK_NAMESPACE, DELEGATION_TREE_LOCK_ID]))
    .rows[0]?.citus === true;

/** Stores or updates `delegation` (see the module comment). Throws RecordStoreError RECORD_INVALID. */
export async function upsertDelegation(q: Queryable, delegation: Delegation, opts: UpsertDelegationOptions = {}): Promise<UpsertDelegationResult> {
  const checked = validate<Delegation>("delegation", structuredClone(delegation));
  if (!checked.ok) throw new RecordStoreError("RECORD_INVALID", `delegation is not valid: ${checked.errors.join("; ")}`);
  const { intent_agreement: embedded, ...record } = checked.value;
  const id = record.delegation_id;
  const chainIds = record.delegation_chain.map((l) => l.delegation_id);
  if ([id, ...chainIds].some((x) => x.length < 1 || x.length > MAX_ID_LENGTH)) {
    throw new RecordStoreError("RECORD_INVALID", `delegation ids (its own and its chain's) must be 1 to ${MAX_ID_LENGTH} characters`);
  }
  const parent = chainIds[chainIds.length - 1] ?? null;

  // A record that revokes itself must not race a child stored concurrently: take the lock exclusively.
  const citus = await (record.status === "revoked" ? lockExclusive(q) : lockShared(q));
  const stored = { record, embedded, id, chainIds, parent };
  if (!citus) return storeDelegation(q, delegation, stored, opts);
  // On Citus the rows' change notices come from this session (./delegations-citus.ts).
  return withNoticesHere(q, (agents) => storeDelegation(q, delegation, stored, opts, agents));
}

/**
 * `upsertDelegation` once validated and locked. `written` (Citus only) collects the agents whose
 * delegation or agreement rows this call writes.
 */
async function storeDelegation(
  q: Queryable,
  delegation: Delegation,
  {
    record,
    embedded,
    id,
    chainIds,
    parent,
  }: { record: Omit<Delegation, "intent_agreement">; embedded: Delegation["intent_agreement"]; id: string; chainIds: string[]; parent: string | null },
  opts: UpsertDelegationOptions,
  written?: Set<string>,
): Promise<UpsertDelegationResult> {
  // A link names a delegation of the child's organization only (docs/scale.md, "Organization-scoped ids").
  const chainAgents = chainIds.length > 0 ? await chainLinkAgents(q, await declaredOrg(q, record.agent.agent_id, id, opts.orgId), chainIds) : [];
  // The row is read by its key (agent_id, delegation_id); the claim in record_ids says whether another agent holds the id.
  const { rows } = await q.query<StoredRow>(
    "SELECT generation::text AS generation, agent_id, chain_agents, record, org_id, revoked_at FROM delegations WHERE agent_id = $1 AND delegation_id = $2 FOR NO KEY UPDATE",
    [record.agent.agent_id, id],
  );
  const stored = rows[0];
  const orgId = opts.orgId !== undefined ? opts.orgId : (stored?.org_id ?? null);
  // The id is claimed within the organization (migrations/0472_record_ids_per_org.sql): another organization's is another record.
  const holder = stored ? undefined : await recordIdHolder(q, "delegation", orgId, id);
  if (holder !== undefined && holder !== record.agent.agent_id) {
    // The agent is the first column of every key of the record's rows (docs/scale.md, "Keys").
    throw new RecordStoreError(
      "RECORD_INVALID",
      `delegation ${id} is stored for agent ${holder}; a stored delegation's agent never changes (declare a grant to ${record.agent.agent_id} under another id)`,
    );
  }
  if (
    stored &&
    !opts.recordsMandate &&
    (await q.query("SELECT 1 FROM mandates WHERE agent_id = $1 AND delegation_id = $2", [record.agent.agent_id, id])).rows.length > 0
  ) {
    throw new RecordStoreError("RECORD_INVALID", `delegation ${id} is a recorded payment mandate; it cannot be replaced by a declared delegation`);
  }
  // Revocations are read in the record's organization: an id names a record within one organization.
  const ancestors = await q.query<{ delegation_id: string; revoked_at: Date; revoked_by: string }>(
    "SELECT delegation_id, revoked_at, revoked_by FROM delegation_revocations WHERE org_id = $2 AND delegation_id = ANY($1::text[]) ORDER BY revoked_at, (delegation_id = root_id) DESC, delegation_id LIMIT 1",
    [[id, ...chainIds], revocationScope(orgId)],
  );
  const prior = ancestors.rows[0];
  const storedRevoked = stored?.revoked_at != null;
  const revoke: RevocationActs | undefined = storedRevoked
    ? undefined
    : prior
      ? {
          reason: prior.delegation_id === id ? "revoked before" : `link ${prior.delegation_id} above it is revoked`,
          by: prior.revoked_by,
          at: prior.revoked_at,
        }
      : record.status === "revoked"
        ? { reason: "the record's status is revoked", by: "record", at: opts.at ?? new Date() }
        : undefined;
  // The row is written live; a revocation below marks it (and everything under it) in one place.
  if (storedRevoked) record.status = "revoked";
  else if (record.status === "revoked") record.status = "active";
  const values = [id, orgId, record.agent.agent_id, JSON.stringify(record.principal), record.status, JSON.stringify(record), parent, chainIds, chainAgents];

  let created = false;
  let changed = false;
  let generation: number;
  if (!stored) {
    // Claimed first (migrations/0322_record_claims.sql): one stored concurrently is waited for, then updated like any stored row.
    if (!(await claimRecordId(q, "delegation", id, orgId, record.agent.agent_id))) {
      if (opts.claimedBefore) throw new RecordStoreError("RECORD_INVALID", `delegation ${id} is claimed but not stored`);
      return upsertDelegation(q, delegation, { ...opts, claimedBefore: true });
    }
    const ins = await q.query<{ generation: string }>(
      `INSERT INTO delegations (delegation_id, org_id, agent_id, principal, status, record, parent_delegation_id, chain_ids, chain_agents)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING generation::text AS generation`,
      values,
    );
    created = changed = true;
    generation = Number(ins.rows[0]?.generation ?? 1);
  } else {
    changed =
      canonicalJson(stored.record) !== canonicalJson(record) || stored.org_id !== orgId || canonicalJson(stored.chain_agents) !== canonicalJson(chainAgents);
    generation = Number(stored.generation);
    // Another stored chain above it: its agreements' totals leave the old links' running totals and join the new ones' (./ledger/chain-spend.ts).
    const rechained =
      canonicalJson(stored.chain_agents) !== canonicalJson(chainAgents) || canonicalJson(storedChainIds(stored.record)) !== canonicalJson(chainIds);
    if (rechained) await moveChainSpend(q, record.agent.agent_id, { delegationId: id }, -1);
    if (changed) {
      const upd = await q.query<{ generation: string }>(
        `UPDATE delegations SET org_id = $2, principal = $4, status = $5, record = $6, parent_delegation_id = $7,
           chain_ids = $8, chain_agents = $9, generation = generation + 1, updated_at = now()
         WHERE agent_id = $3 AND delegation_id = $1 RETURNING generation::text AS generation`,
        values,
      );
      if (stored.org_id !== orgId && !(await moveRecordId(q, "delegation", id, stored.org_id, orgId, record.agent.agent_id))) {
        throw new RecordStoreError("RECORD_INVALID", `delegation ${id} is held by another agent of organization ${String(orgId)}`);
      }
      generation = Number(upd.rows[0]?.generation ?? generation + 1);
    }
    if (rechained) await moveChainSpend(q, record.agent.agent_id, { delegationId: id }, 1);
  }
  let revoked = storedRevoked;
  let revocation: UpsertDelegationResult["revocation"];
  if (revoke) {
    const r = await markRevoked(q, orgId, id, revoke, written);
    if (r.ids.length > 0) revocation = { ...r, ...revoke, declared: !prior };
    revoked = true;
    generation += 1;
    changed = true;
  }
  const out: UpsertDelegationResult = { delegationId: id, generation, created, changed, revoked };
  if (revocation) out.revocation = revocation;
  if (embedded) out.agreement = await upsertAgreement(q, embedded, { delegationId: id, orgId, agentId: record.agent.agent_id });
  if (written && (changed || out.agreement?.changed || out.agreement?.created)) written.add(record.agent.agent_id);
  return out;
}

/**
 * The agent of each link `ids` of a chain, in the order of `ids` (null: not stored), the child's
 * `chain_agents` (migrations/0321_chain_agents.sql). It writes nothing: a stored ancestor is
 * marked `has_descendants` by the first spend below it (sql/functions/writ_chain_spend_add.sql),
 * so storing a child writes nothing on its ancestors' rows (on a Citus cluster, nothing on
 * another agent's shard).
 */
async function chainLinkAgents(q: Queryable, orgId: string | null, ids: readonly string[]): Promise<(string | null)[]> {
  const { rows: links } = await q.query<{ delegation_id: string; agent_id: string }>(
    "SELECT delegation_id, agent_id FROM delegations WHERE delegation_id = ANY($1::text[]) AND org_id IS NOT DISTINCT FROM $2",
    [ids, orgId],
  );
  return ids.map((id) => links.find((l) => l.delegation_id === id)?.agent_id ?? null);
}

/** The chain ids of a stored delegation record (root first). */
function storedChainIds(record: unknown): string[] {
  const chain = (record as { delegation_chain?: { delegation_id: string }[] } | null)?.delegation_chain ?? [];
  return chain.map((l) => l.delegation_id);
}

/** The organization a declaration of `agentId`'s `id` is stored for: `orgId` when given, else the stored row's (null: none). */
async function declaredOrg(q: Queryable, agentId: string, id: string, orgId: string | null | undefined): Promise<string | null> {
  if (orgId !== undefined) return orgId;
  const { rows } = await q.query<{ org_id: string | null }>("SELECT org_id FROM delegations WHERE agent_id = $1 AND delegation_id = $2", [agentId, id]);
  return rows[0]?.org_id ?? null;
}

/**
 * Revokes delegation `id` and everything below it (see the module comment) and announces the
 * newly revoked ids with NOTIFY `{kind: "delegation", ids}` when the transaction commits.
 */
export async function revokeDelegation(q: Queryable, orgId: string | null, id: string, acts: RevocationActs): Promise<RevokeResult> {
  if (!(await lockExclusive(q))) return markRevoked(q, orgId, id, acts);
  // On Citus the rows' change notices come from this session (./delegations-citus.ts).
  return withNoticesHere(q, (agents) => markRevoked(q, orgId, id, acts, agents));
}

/** The key of an organization in `delegation_revocations` and in announcements: '' for none. */
export function revocationScope(orgId: string | null | undefined): string {
  return orgId ?? "";
}

/**
 * The revocation itself. The caller holds the tree lock: exclusively for a new revocation;
 * shared suffices for marking a row under an already committed one. `written` (Citus only)
 * collects the agents whose rows it marks: there the subtree is found level by level
 * (./delegations-citus.ts).
 */
async function markRevoked(q: Queryable, orgId: string | null, id: string, acts: RevocationActs, written?: Set<string>): Promise<RevokeResult> {
  const scope = revocationScope(orgId);
  if (written) {
    const r = await markRevokedCitus(q, scope, id, acts);
    for (const a of r.agents) written.add(a);
    if (r.ids.length > 0) await announceRevoked(q, "delegation", r.ids, scope);
    return { ids: r.ids, found: r.found };
  }
  // Everything within the organization `scope` only: the id, its descendants by chain and by parent.
  const { rows } = await q.query<{ found: boolean; marked: string[]; recorded: string[] }>(
    `WITH RECURSIVE sub(agent_id, delegation_id) AS (
       SELECT agent_id, delegation_id FROM delegations WHERE (delegation_id = $1 OR chain_ids @> ARRAY[$1::text]) AND coalesce(org_id, '') = $5
       UNION
       SELECT d.agent_id, d.delegation_id FROM delegations d JOIN sub ON d.parent_delegation_id = sub.delegation_id WHERE coalesce(d.org_id, '') = $5
     ),
     upd AS (
       UPDATE delegations d SET status = 'revoked', revoked_at = $2, revoked_reason = $3, revoked_by = $4,
         record = jsonb_set(d.record, '{status}', '"revoked"'), generation = d.generation + 1, updated_at = now()
       FROM sub WHERE d.agent_id = sub.agent_id AND d.delegation_id = sub.delegation_id AND d.revoked_at IS NULL
       RETURNING d.delegation_id
     ),
     seed AS (
       SELECT EXISTS (SELECT 1 FROM sub) OR EXISTS (SELECT 1 FROM delegation_revocations WHERE org_id = $5 AND delegation_id = $1) AS found
     ),
     rec AS (
       INSERT INTO delegation_revocations (org_id, delegation_id, revoked_at, reason, revoked_by, root_id)
       SELECT $5, x.id, $2, $3, $4, $1 FROM (SELECT $1::text AS id FROM seed WHERE found UNION SELECT delegation_id FROM upd) x
       ON CONFLICT (org_id, delegation_id) DO NOTHING
       RETURNING delegation_id
     )
     SELECT (SELECT found FROM seed) AS found,
            coalesce((SELECT array_agg(delegation_id) FROM upd), '{}') AS marked,
            coalesce((SELECT array_agg(delegation_id) FROM rec), '{}') AS recorded`,
    [id, acts.at, acts.reason, acts.by, scope],
  );
  const row = rows[0];
  const ids = [...new Set([...(row?.recorded ?? []), ...(row?.marked ?? [])])].sort();
  if (ids.length > 0) await announceRevoked(q, "delegation", ids, scope);
  return { ids, found: row?.found ?? false };
}

/** A stored delegation with its bookkeeping columns. */
export interface StoredDelegation {
  delegationId: string;
  generation: number;
  orgId: string | null;
  agentId: string;
  status: Delegation["status"];
  revokedAt: Date | null;
  revokedReason: string | null;
  revokedBy: string | null;
  parentDelegationId: string | null;
  /** The Delegation without `intent_agreement`. */
  record: Delegation;
}

/** The stored delegation `id` of agent `agentId` (its key), or, without an agent, the first of those stored under `id` in `orgId` (null: none) when given, else of any. */
export async function loadDelegation(q: Queryable, id: string, agentId?: string, orgId?: string | null): Promise<StoredDelegation | undefined> {
  return (await loadDelegationsById(q, id, agentId, orgId))[0];
}

/**
 * The delegations stored under `id` (one per agent; several organizations may each hold the
 * id, docs/scale.md "Organization-scoped ids"), of agent `agentId` when given, of organization
 * `orgId` (null: without one) when given, in agent order.
 */
export async function loadDelegationsById(q: Queryable, id: string, agentId?: string, orgId?: string | null): Promise<StoredDelegation[]> {
  const { rows } = await q.query<{
    delegation_id: string;
    generation: string;
    org_id: string | null;
    agent_id: string;
    status: Delegation["status"];
    revoked_at: Date | null;
    revoked_reason: string | null;
    revoked_by: string | null;
    parent_delegation_id: string | null;
    record: Delegation;
  }>(
    `SELECT delegation_id, generation::text AS generation, org_id, agent_id, status, revoked_at, revoked_reason, revoked_by,
            parent_delegation_id, record FROM delegations
     WHERE delegation_id = $1 AND ($2::text IS NULL OR agent_id = $2) AND (NOT $3 OR org_id IS NOT DISTINCT FROM $4)
     ORDER BY agent_id`,
    [id, agentId ?? null, orgId !== undefined, orgId ?? null],
  );
  return rows.map((r) => ({
    delegationId: r.delegation_id,
    generation: Number(r.generation),
    orgId: r.org_id,
    agentId: r.agent_id,
    status: r.status,
    revokedAt: r.revoked_at,
    revokedReason: r.revoked_reason,
    revokedBy: r.revoked_by,
    parentDelegationId: r.parent_delegation_id,
    record: r.record,
  }));
}

/** The organizations ('' for none) in which `id` is known without being stored: a link of a stored chain, or revoked before. */
export async function delegationLinkOrgs(q: Queryable, id: string): Promise<string[]> {
  const { rows } = await q.query<{ org: string }>(
    `SELECT coalesce(org_id, '') AS org FROM delegations WHERE chain_ids @> ARRAY[$1::text]
     UNION SELECT org_id FROM delegation_revocations WHERE delegation_id = $1 ORDER BY 1`,
    [id],
  );
  return rows.map((r) => r.org);
}

/**
 * Records (and generations) of the stored delegations `ids[i]` of agent `agents[i]` (each by
 * its key); the verify cache loads misses with it.
 */
export async function loadDelegationRecords(
  q: Queryable,
  agents: readonly string[],
  ids: readonly string[],
): Promise<{ delegationId: string; agentId: string; generation: number; record: Delegation }[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<{ delegation_id: string; agent_id: string; generation: string; record: Delegation }>(
    `SELECT d.delegation_id, d.agent_id, d.generation::text AS generation, d.record
     FROM unnest($1::text[], $2::text[]) AS k(agent_id, delegation_id) JOIN delegations d ON d.agent_id = k.agent_id AND d.delegation_id = k.delegation_id`,
    [agents, ids],
  );
  return rows.map((r) => ({ delegationId: r.delegation_id, agentId: r.agent_id, generation: Number(r.generation), record: r.record }));
}

/** Every revoked delegation id with its organization ('' for none): the durable list the revocation index loads. */
export async function listRevokedDelegationIds(q: Queryable): Promise<{ org: string; id: string }[]> {
  const { rows } = await q.query<{ org_id: string; delegation_id: string }>("SELECT org_id, delegation_id FROM delegation_revocations");
  return rows.map((r) => ({ org: r.org_id, id: r.delegation_id }));
}

/** What the chain reads of a stored delegation: its version, tenant and revocation (the record comes from the record cache). */
export interface ChainHead {
  delegationId: string;
  agentId: string;
  generation: number;
  orgId: string | null;
  revoked: boolean;
}

/**
 * The head of delegation `selfId` of agent `agentId` and those of the stored delegations among
 * `ids` (its chain's links) of the same organization: an id names a link only within the
 * child's organization (docs/scale.md, "Organization-scoped ids"). One statement; the verify
 * path reads a chain's with it. Nothing when the delegation itself is not stored.
 */
export async function loadChainHeads(q: Queryable, agentId: string, selfId: string, ids: readonly string[]): Promise<ChainHead[]> {
  const { rows } = await q.query<{ delegation_id: string; agent_id: string; generation: string; org_id: string | null; revoked: boolean }>(
    `WITH s AS (SELECT agent_id, delegation_id, org_id FROM delegations WHERE agent_id = $1 AND delegation_id = $2)
     SELECT d.delegation_id, d.agent_id, d.generation::text AS generation, d.org_id, d.revoked_at IS NOT NULL AS revoked
     FROM delegations d JOIN s ON d.agent_id = s.agent_id AND d.delegation_id = s.delegation_id
     UNION ALL
     SELECT d.delegation_id, d.agent_id, d.generation::text AS generation, d.org_id, d.revoked_at IS NOT NULL AS revoked
     FROM s JOIN delegations d ON d.delegation_id = ANY($3::text[]) AND d.org_id IS NOT DISTINCT FROM s.org_id
       AND NOT (d.agent_id = s.agent_id AND d.delegation_id = s.delegation_id)`,
    [agentId, selfId, ids],
  );
  return rows.map((r) => ({ delegationId: r.delegation_id, agentId: r.agent_id, generation: Number(r.generation), orgId: r.org_id, revoked: r.revoked }));
}

/**
 * The stored delegations of organization `orgId` (null: without one) that the links `ids` cite
 * (a child cites a parent of its own organization only), in the order of `ids` (undefined where
 * none is stored), as core `withStoredChain` takes them. One statement.
 */
export async function loadStoredChain(q: Queryable, orgId: string | null, ids: readonly string[]): Promise<(StoredAncestor | undefined)[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<{ delegation_id: string; org_id: string | null; revoked: boolean; record: Delegation }>(
    "SELECT delegation_id, org_id, revoked_at IS NOT NULL AS revoked, record FROM delegations WHERE delegation_id = ANY($1::text[]) AND org_id IS NOT DISTINCT FROM $2",
    [ids, orgId],
  );
  const byId = new Map(rows.map((r) => [r.delegation_id, { delegation: r.record, orgId: r.org_id, revoked: r.revoked }]));
  return ids.map((id) => byId.get(id));
}
