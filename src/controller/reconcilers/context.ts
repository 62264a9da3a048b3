/**
 * What every reconciler works with (the API client, the pool, the informer caches, the queues,
 * events, bindings, the log signer) and the shared last step: turning the outcome into
 * conditions, writing `.status` when it changed, and emitting an Event when `Ready` changes (not
 * for a new resource that is simply Ready).
 */
import type { Pool } from "pg";
import type { Signer } from "../../core/jose/index.js";
import type { KubeTransport, ResourceRef, NamespaceBindings } from "../../sources/kubernetes/index.js";
import type { Clock } from "../../core/time/index.js";
import { findCondition, mergeConditions, type DesiredCondition } from "../conditions.js";
import type { ControllerReason } from "../reasons.js";
import type { EventRecorder } from "../events.js";
import type { WritResource } from "../kinds.js";
import type { Logger } from "../log.js";
import { writeStatus } from "../resource-writes.js";
import { summary, type Refusal } from "../spec-errors.js";
import type { StatusMemo } from "../status-memo.js";
import { isDbUnavailable } from "../../store/index.js";
import { errorText } from "../log.js";

/** Cached resources of one kind (the informers' caches). */
export interface ResourceCache {
  get(namespace: string, name: string): WritResource | undefined;
  list(namespace?: string): WritResource[];
}

/** Everything a reconcile needs. */
export interface ReconcileContext {
  client: KubeTransport;
  pool: Pool;
  clock: Clock;
  log: Logger;
  events: EventRecorder;
  bindings: NamespaceBindings;
  caches: { delegations: ResourceCache; agreements: ResourceCache; subscriptions: ResourceCache };
  /** Queues a key (`namespace/name`) of a kind for reconciliation. */
  enqueue: { delegation(key: string): void; agreement(key: string): void; subscription(key: string): void };
  /** Signs transparency log heads; undefined when SVC_LOG_SIGNING_SEED is unset. */
  logSigner: Signer | undefined;
  /** Checkpoint origin of log heads. */
  logOrigin: string | undefined;
  /** The statuses the controller wrote (foreign status writes are then reconciled at once). */
  statusMemo?: StatusMemo;
  /** Key-binding checks of declared payment mandates (WRIT_MANDATE_*; default audience `writ`, 300 s). */
  mandates?: { audience: string; kbMaxAgeMs: number };
}

/** A condition from the refusals of `type`: False with the first one's code, else True with `ok`. */
export function conditionOf(type: string, refusals: readonly Refusal[], ok: { reason: ControllerReason; message: string }): DesiredCondition {
  const mine = refusals.filter((r) => r.condition === type);
  const first = mine[0];
  if (!first) return { type, status: "True", ...ok };
  return { type, status: "False", reason: first.code, message: summary(mine) };
}

/** "active" -> "Active". */
export function phaseOf(status: string): string {
  return status.charAt(0).toUpperCase() + status.slice(1);
}

/** `obj` without undefined members (a status must not carry them). */
function defined(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Writes the status (`fields` plus merged `conditions` and `observedGeneration`) unless it is
 * unchanged, and records an Event when the Ready condition's status or reason changes, or when
 * a new resource is not Ready.
 */
export async function report(
  ctx: ReconcileContext,
  ref: ResourceRef,
  kind: string,
  obj: WritResource,
  fields: Record<string, unknown>,
  conditions: readonly DesiredCondition[],
): Promise<void> {
  const generation = obj.metadata.generation ?? 0;
  const merged = mergeConditions(obj.status?.conditions, conditions, generation, ctx.clock.now());
  const status = { ...defined(fields), conditions: merged, observedGeneration: generation };
  ctx.statusMemo?.remember(obj.metadata.uid, status);
  const written = await writeStatus(ctx.client, ref, obj, status);
  const before = findCondition(obj.status, "Ready");
  const ready = merged.find((c) => c.type === "Ready");
  // A new resource that is simply Ready gets no Event (one write fewer per resource); a refusal,
  // and every later change of Ready's status or reason, does.
  const changed = before ? before.status !== ready?.status || before.reason !== ready?.reason : ready?.status !== "True";
  if (written && ready && changed) {
    ctx.events.record(obj, kind, ready.status === "True" ? "Normal" : "Warning", ready.reason, ready.message);
  }
}

/** `spec.delegation_id` of a Delegation resource, when it is a non-empty string. */
export function delegationIdOf(obj: WritResource): string | undefined {
  const id = (obj.spec as { delegation_id?: unknown } | undefined)?.delegation_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** `spec.delegationRef.name` of an IntentAgreement resource. */
export function delegationRefOf(obj: WritResource): string | undefined {
  const ref = (obj.spec as { delegationRef?: { name?: unknown } } | undefined)?.delegationRef;
  return typeof ref?.name === "string" ? ref.name : undefined;
}

/** Queues the IntentAgreements of `namespace` bound to the Delegation `name`. */
export function enqueueAgreementsOf(ctx: ReconcileContext, namespace: string, name: string): void {
  for (const a of ctx.caches.agreements.list(namespace)) if (delegationRefOf(a) === name) ctx.enqueue.agreement(`${namespace}/${a.metadata.name}`);
}

/** Queues every Delegation whose chain names `delegationId` (their status then says revoked), and their agreements. */
export function enqueueBelow(ctx: ReconcileContext, delegationId: string): void {
  for (const d of ctx.caches.delegations.list()) {
    const chain = (d.spec as { delegation_chain?: unknown } | undefined)?.delegation_chain;
    if (!Array.isArray(chain)) continue;
    if (chain.some((l) => typeof l === "object" && l !== null && (l as { delegation_id?: unknown }).delegation_id === delegationId)) {
      const ns = d.metadata.namespace ?? "";
      ctx.enqueue.delegation(`${ns}/${d.metadata.name}`);
      enqueueAgreementsOf(ctx, ns, d.metadata.name);
    }
  }
}

/** A requeue delay for an instant: at least 1 s after it, at most a day away. */
export function requeueAt(whenMs: number, now: number): number {
  return Math.min(24 * 3600_000, Math.max(1000, whenMs - now + 1000));
}

/** The reason of conditions that cannot be evaluated while Postgres is unreachable. */
export const STORE_UNAVAILABLE: ControllerReason = "StoreUnavailable";

/**
 * Runs `work` (a reconcile of `obj`); when it fails because Postgres cannot be reached, the
 * status says so first (phase Unknown; every condition but those in `keep` Unknown, reason
 * StoreUnavailable, with the error), rather than staying empty or stale; then the error is
 * rethrown, so the key is retried with backoff and counted as an error.
 */
export async function reportingStoreOutage<T>(
  ctx: ReconcileContext,
  ref: ResourceRef,
  kind: string,
  obj: WritResource,
  types: readonly string[],
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!isDbUnavailable(err)) throw err;
    const message = `Postgres cannot be reached (${errorText(err)}): what is stored for this resource, and so what verify answers, cannot be read; retrying`;
    const conditions = types.map((type): DesiredCondition => ({ type, status: "Unknown", reason: STORE_UNAVAILABLE, message }));
    await report(ctx, ref, kind, obj, { phase: "Unknown" }, conditions).catch((e: unknown) =>
      ctx.log.warn("cannot report the database outage in the status", { error: errorText(e) }),
    );
    throw err;
  }
}
