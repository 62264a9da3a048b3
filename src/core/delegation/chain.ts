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
 * the link; `evaluateChain` adds what can change after preparation: revocation and expiry of
 * any link (a revocation or expiry anywhere above invalidates everything below).
 */
import type { EvalContext, PreparedDelegation, PreparedLink } from "../evaluate/types.js";
import type { Finding } from "../evaluate/reasons.js";
import { conditionWidenings } from "./condition-narrowing.js";
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

/**
 * Chain findings at evaluation time: CHAIN_BROKEN and CHAIN_SCOPE_WIDENED from the prepared
 * facts, CHAIN_LINK_REVOKED for the first revoked link and CHAIN_LINK_EXPIRED for the first
 * link whose expiry is at or before `ctx.now`. Empty for an intact, live chain.
 */
export function evaluateChain(prepared: PreparedDelegation, ctx: EvalContext): Finding[] {
  const out: Finding[] = [];
  if (prepared.chainBroken !== undefined) out.push({ code: "CHAIN_BROKEN", message: prepared.chainBroken });
  if (prepared.chainWidened !== undefined) out.push({ code: "CHAIN_SCOPE_WIDENED", message: prepared.chainWidened });
  const chain = prepared.chain;
  let revoked = false;
  let expired = false;
  for (let i = 0; i < chain.length; i++) {
    const pl = chain[i];
    if (pl === undefined) continue;
    const id = (pl.link as { delegation_id?: unknown } | undefined)?.delegation_id;
    if (!revoked && typeof id === "string" && ctx.revocations.isDelegationRevoked(id)) {
      revoked = true;
      out.push({ code: "CHAIN_LINK_REVOKED", message: `link ${i + 1} (${id}) is revoked, which invalidates everything below it` });
    }
    if (!expired && pl.expiresAtMs <= ctx.now) {
      expired = true;
      out.push({
        code: "CHAIN_LINK_EXPIRED",
        message: `link ${i + 1} (${String(id)}) expired at ${String(pl.link?.expires_at)}, which invalidates everything below it`,
      });
    }
  }
  return out;
}
