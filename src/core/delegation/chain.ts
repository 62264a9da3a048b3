/**
 * Agent-to-agent delegation chains.
 *
 * The chain runs from the root principal: link 1 is delegated by `delegation.principal`, each
 * next link by the agent the previous link delegated to, and this delegation is the final
 * hop, from the last link's delegate to `delegation.agent`. A discontinuity, a repeated agent
 * (a cycle, including a self-delegation) or a repeated delegation id is a break. Each hop must
 * only narrow its parent: scope (see `scopeWidenings`), `expires_at` not later, `delegated_at`
 * (`granted_at` for this delegation) not earlier, and every parent condition kept identically
 * or narrower. `prepareChain` records the first break and the first widening, each naming
 * the link; `evaluateChain` (src/core/evaluate/delegation-chain.ts) adds what can change after preparation: revocation and expiry of
 * any link (a revocation or expiry anywhere above invalidates everything below).
 *
 * A link is a citation of a stored delegation, never a fact of its own: `withStoredChain`
 * replaces every link by the one its STORED delegation gives (`parentLink`), so narrowing,
 * continuity, expiry and revocation are judged against what the service holds. A link must
 * be a delegation stored for the same organization, filed under the same ancestors (its
 * stored chain is this chain's links above it) and given to the agent that delegates next
 * (continuity, checked by `prepareChain` on the stored links); every stored ancestor names
 * the same root principal (with the same key) as this delegation. `chainCopyProblems` says
 * where a declared copy differs from the stored delegation it cites (the controller refuses
 * such a declaration). docs/threat-model/chains.md.
 */
import type { PreparedDelegation, PreparedLink } from "./prepared.js";
import { conditionWidenings } from "./condition-narrowing.js";
import { canonicalJson } from "../canonical/index.js";
import { parseInstant } from "../time/index.js";
import { scopeWidenings } from "./scope.js";
import type { ChainLink, Condition, Delegation, Scope } from "./types.js";

/** What `prepareChain` finds. */
export interface PreparedChain {
  chain: PreparedLink[];
  chainBroken?: string;
  chainWidened?: string;
}

/** One hop as compared with its parent. */
interface Hop {
  label: string;
  scope: Scope;
  conditions: readonly Condition[] | undefined;
  startText: unknown;
  startMs: number | undefined;
  startField: "delegated_at" | "granted_at";
  expiresText: unknown;
  expiresMs: number | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function nonEmpty(v: unknown): v is string {
  return typeof v === "string" && v.length > 0;
}

/** Why a link is malformed, or undefined. */
function linkShapeProblem(link: unknown): string | undefined {
  if (!isObject(link)) return "is not an object";
  if (!nonEmpty(link.delegation_id)) return "has no delegation_id";
  if (!isObject(link.delegator) || !nonEmpty(link.delegator.type) || !nonEmpty(link.delegator.id)) return "has no delegator {type, id}";
  if (!isObject(link.delegate) || !nonEmpty(link.delegate.agent_id)) return "has no delegate agent_id";
  if (!isObject(link.scope) || typeof link.scope.currency !== "string") return "has no scope with a currency";
  if (link.conditions !== undefined && !Array.isArray(link.conditions)) return "has conditions that are not a list";
  if (parseInstant(link.delegated_at) === undefined) return `has an unparseable delegated_at ${JSON.stringify(link.delegated_at)}`;
  if (parseInstant(link.expires_at) === undefined) return `has an unparseable expires_at ${JSON.stringify(link.expires_at)}`;
  return undefined;
}

function widening(parent: Hop, child: Hop): string | undefined {
  const scope = scopeWidenings(parent.scope, child.scope)[0];
  if (scope) return `${child.label} widens ${scope}`;
  if (parent.expiresMs !== undefined && child.expiresMs !== undefined && child.expiresMs > parent.expiresMs) {
    return `${child.label} widens expires_at: ${String(child.expiresText)} is later than its parent's ${String(parent.expiresText)}`;
  }
  if (parent.startMs !== undefined && child.startMs !== undefined && child.startMs < parent.startMs) {
    return `${child.label} widens ${child.startField}: ${String(child.startText)} is earlier than its parent's ${parent.startField} ${String(parent.startText)}`;
  }
  const cond = conditionWidenings(parent.conditions, child.conditions)[0];
  if (cond) return `${child.label} widens ${cond}`;
  return undefined;
}

/** Checks continuity and narrowing of the delegation's chain (see the module comment). */
export function prepareChain(delegation: Delegation): PreparedChain {
  const raw: unknown = delegation.delegation_chain;
  if (!Array.isArray(raw) && raw !== undefined) return { chain: [], chainBroken: "delegation_chain is not a list" };
  if (raw === undefined || raw.length === 0) {
    const p = delegation.principal;
    if (p?.type === "agent" && p.id === delegation.agent?.agent_id) {
      return { chain: [], chainBroken: `this delegation (${delegation.delegation_id}) delegates from agent ${p.id} to itself` };
    }
    return { chain: [] };
  }
  const chain: PreparedLink[] = [];
  let broken: string | undefined;
  let widened: string | undefined;
  const brk = (msg: string): void => {
    broken ??= msg;
  };
  const principal = delegation.principal;
  const seenAgents = new Set<string>();
  const seenIds = new Set<string>([delegation.delegation_id]);
  if (principal?.type === "agent") seenAgents.add(principal.id);
  let parent: Hop | undefined;
  let prevDelegate: string | undefined;

  for (let i = 0; i < raw.length; i++) {
    const entry: unknown = raw[i];
    const id = isObject(entry) && typeof entry.delegation_id === "string" ? entry.delegation_id : "?";
    const label = `link ${i + 1} (${id})`;
    const shape = linkShapeProblem(entry);
    if (shape !== undefined) {
      brk(`${label} ${shape}`);
      const expiresMs = isObject(entry) ? parseInstant(entry.expires_at) : undefined;
      chain.push({ link: entry as ChainLink, expiresAtMs: expiresMs ?? 0 });
      parent = undefined;
      prevDelegate = undefined;
      continue;
    }
    const link = entry as unknown as ChainLink;
    const expiresAtMs = parseInstant(link.expires_at) ?? 0;
    chain.push({ link, expiresAtMs });
    const by = `${link.delegator.type}:${link.delegator.id}`;
    if (i === 0) {
      if (link.delegator.type !== principal?.type || link.delegator.id !== principal.id) {
        brk(`${label} is delegated by ${by}, not by the root principal ${String(principal?.type)}:${String(principal?.id)}`);
      }
    } else if (prevDelegate === undefined || link.delegator.type !== "agent" || link.delegator.id !== prevDelegate) {
      brk(`${label} is delegated by ${by}, not by agent:${String(prevDelegate)} (the delegate of link ${i})`);
    }
    if (seenIds.has(link.delegation_id)) brk(`${label} repeats a delegation_id already in the chain`);
    seenIds.add(link.delegation_id);
    const agent = link.delegate.agent_id;
    if (seenAgents.has(agent)) brk(`${label} delegates to agent ${agent}, which already appears above it: the chain has a cycle`);
    seenAgents.add(agent);
    const hop: Hop = {
      label,
      scope: link.scope,
      conditions: link.conditions,
      startText: link.delegated_at,
      startMs: parseInstant(link.delegated_at),
      startField: "delegated_at",
      expiresText: link.expires_at,
      expiresMs: expiresAtMs,
    };
    if (parent) widened ??= widening(parent, hop);
    parent = hop;
    prevDelegate = agent;
  }

  // The final hop: from the last link's delegate to this delegation's agent.
  const label = `this delegation (${delegation.delegation_id})`;
  const agent = delegation.agent?.agent_id;
  if (typeof agent !== "string" || agent.length === 0) brk(`${label} names no agent`);
  else if (agent === prevDelegate) brk(`${label} delegates from agent ${agent} to itself`);
  else if (seenAgents.has(agent)) brk(`${label} delegates to agent ${agent}, which already appears in the chain: the chain has a cycle`);
  if (parent && isObject(delegation.scope)) {
    widened ??= widening(parent, {
      label,
      scope: delegation.scope,
      conditions: delegation.conditions,
      startText: delegation.granted_at,
      startMs: parseInstant(delegation.granted_at),
      startField: "granted_at",
      expiresText: delegation.expires_at,
      expiresMs: parseInstant(delegation.expires_at),
    });
  }
  const out: PreparedChain = { chain };
  if (broken !== undefined) out.chainBroken = broken;
  if (widened !== undefined) out.chainWidened = widened;
  return out;
}

/** The chain link that records `parent` in its children's `delegation_chain` (what `writ delegation narrow` writes). */
export function parentLink(parent: Delegation): ChainLink {
  const last = parent.delegation_chain.at(-1);
  const delegator = last === undefined ? { type: parent.principal.type, id: parent.principal.id } : { type: "agent" as const, id: last.delegate.agent_id };
  return {
    delegation_id: parent.delegation_id,
    delegator,
    delegate: { agent_id: parent.agent.agent_id },
    delegated_at: parent.granted_at,
    expires_at: parent.expires_at,
    scope: structuredClone(parent.scope),
    ...(parent.conditions.length > 0 ? { conditions: structuredClone(parent.conditions) } : {}),
  };
}

/** A delegation as the store holds it, for judging a chain that cites it. */
export interface StoredAncestor {
  /** The stored record (its `status` is `revoked` once revoked). */
  delegation: Delegation;
  /** The organization it is stored for (null: none). */
  orgId: string | null;
  /** Revoked in the store. */
  revoked: boolean;
}

/** Why the stored ancestors do not form this delegation's chain (the first problem), or undefined. */
function storedChainBreak(child: Delegation, childOrg: string | null, ancestors: readonly (StoredAncestor | undefined)[]): string | undefined {
  const ids = child.delegation_chain.map((l) => l.delegation_id);
  const principal = canonicalJson(child.principal);
  for (let i = 0; i < ids.length; i++) {
    const label = `link ${i + 1} (${String(ids[i])})`;
    const a = ancestors[i];
    if (!a || a.delegation.delegation_id !== ids[i]) return `${label} is not a stored delegation: a chain can only cite grants this service holds`;
    if (a.orgId !== childOrg) return `${label} is stored for another organization`;
    const above = a.delegation.delegation_chain.map((l) => l.delegation_id);
    if (canonicalJson(above) !== canonicalJson(ids.slice(0, i))) {
      return `${label} is stored under the chain [${above.join(", ")}], not [${ids.slice(0, i).join(", ")}]`;
    }
    if (canonicalJson(a.delegation.principal) !== principal) return `${label} is stored for another root principal (or principal key) than this delegation's`;
  }
  return undefined;
}

/**
 * `prepared` (this delegation, prepared from its record) with its chain read from the store:
 * `ancestors[i]` is the stored delegation that link i cites (undefined: not stored), and
 * `childOrg` this delegation's organization. The links become the stored delegations' own
 * (`parentLink`), and the chain findings are recomputed from them: CHAIN_BROKEN for a link
 * that is not stored, is another organization's, is filed under other ancestors or names
 * another root principal, or that does not connect; CHAIN_SCOPE_WIDENED when this delegation
 * or a link widens its stored parent; a stored revocation marks its link revoked, a link
 * stored as suspended marks it suspended, and a link stored as expired lapses. The declared copies are not read (pure; no I/O).
 */
export function withStoredChain(prepared: PreparedDelegation, childOrg: string | null, ancestors: readonly (StoredAncestor | undefined)[]): PreparedDelegation {
  const child = prepared.delegation;
  const broken = storedChainBreak(child, childOrg, ancestors);
  const links = child.delegation_chain.map((copy, i) => {
    const a = ancestors[i];
    return a ? parentLink(a.delegation) : copy;
  });
  const fromStore = prepareChain({ ...child, delegation_chain: links });
  const chain = fromStore.chain.map((pl, i): PreparedLink => {
    const a = ancestors[i];
    if (!a) return pl;
    const out: PreparedLink = { ...pl, expiresAtMs: a.delegation.status === "expired" ? 0 : pl.expiresAtMs };
    if (a.revoked || a.delegation.status === "revoked") out.revoked = true;
    else if (a.delegation.status === "suspended") out.suspended = true;
    return out;
  });
  const out: PreparedDelegation = { ...prepared, chain };
  delete out.chainBroken;
  delete out.chainWidened;
  const why = broken ?? fromStore.chainBroken;
  if (why !== undefined) out.chainBroken = why;
  if (fromStore.chainWidened !== undefined) out.chainWidened = fromStore.chainWidened;
  return out;
}

/** Where the declared links of `child` differ from the stored delegations they cite (one sentence per link), empty when they are exact copies. */
export function chainCopyProblems(child: Delegation, ancestors: readonly (StoredAncestor | undefined)[]): string[] {
  const out: string[] = [];
  child.delegation_chain.forEach((copy, i) => {
    const a = ancestors[i];
    if (!a) return;
    const stored = parentLink(a.delegation) as unknown as Record<string, unknown>;
    const declared = copy as unknown as Record<string, unknown>;
    const fields = [...new Set([...Object.keys(stored), ...Object.keys(declared)])].filter(
      (k) => canonicalJson(stored[k] ?? null) !== canonicalJson(declared[k] ?? null),
    );
    if (fields.length > 0)
      out.push(
        `link ${i + 1} (${copy.delegation_id}) is not a copy of the stored delegation it cites: ${fields.join(", ")} differ${fields.length === 1 ? "s" : ""}`,
      );
  });
  return out;
}
