/**
 * The Subscription reconciler: a declared subscription -> the registry's `subscriptions` table
 * (`createSubscription`, the API's store function) for the organization the namespace is bound
 * to -> `status.subscriptionId`.
 *
 * The spec must be `{agentId, webhookUrl}` with a URL that parses (WHATWG) as https, or http on
 * localhost (SPEC_INVALID); the agent must be registered (AGENT_NOT_ACTIVE otherwise; any
 * organization's agent may be followed). `createSubscription` is idempotent per (organization,
 * agent, URL), so a re-reconcile finds the same subscription, and several resources may declare
 * the same one: each holds a claim on it (src/store/record-owners.ts, by the resource's uid,
 * never by an annotation). When the spec changes, the resource releases its claims on the
 * subscriptions it had, and one no resource claims any more is deactivated; deletion
 * (finalizer) does the same. Rows are never deleted. (A subscription declared before claims
 * were recorded, named only by this resource's `writ.dev/record-id` annotation, is released on
 * deletion as before when no resource claims it.)
 *
 * Conditions: Valid, Bound, Stored, Ready. Phase: Invalid, Pending or Ready.
 */
import {
  getAgent,
  withTransaction,
  createSubscription,
  deactivateSubscription,
  claimCount,
  claimRecord,
  claimsOf,
  releaseSubscriptionClaim,
} from "../../store/index.js";
import { splitKey, writRef, UNBOUND_RETRY_MS, type Binding } from "../../sources/kubernetes/index.js";
import { WEBHOOK_URL_PATTERN } from "../../core/crd/index.js";
import type { DesiredCondition } from "../conditions.js";
import type { WritResource } from "../kinds.js";
import { ensureFinalizer, hasFinalizer, removeFinalizer, resourceOwner, storedRecordId } from "../resource-writes.js";
import type { Pool } from "pg";
import type { ReconcileResult } from "../runner.js";
import { summary, type Refusal } from "../spec-errors.js";
import { conditionOf, type ReconcileContext, report, reportingStoreOutage } from "./context.js";

/** The resource reference of Subscriptions. */
export const SUBSCRIPTIONS = writRef("subscriptions");
/** The conditions of this kind, in order. */
const CONDITION_TYPES = ["Valid", "Bound", "Stored", "Ready"];
const KIND = "Subscription";
const URL_RE = new RegExp(WEBHOOK_URL_PATTERN);

/** The checked spec, or the refusals (pure). */
export function checkSubscriptionSpec(spec: unknown): { agentId?: string; webhookUrl?: string; refusals: Refusal[] } {
  const s = (typeof spec === "object" && spec !== null ? spec : {}) as { agentId?: unknown; webhookUrl?: unknown };
  const refusals: Refusal[] = [];
  const bad = (message: string) => refusals.push({ condition: "Valid", code: "SPEC_INVALID", message });
  if (typeof s.agentId !== "string" || s.agentId === "") bad("spec.agentId: must be a non-empty string");
  if (typeof s.webhookUrl !== "string" || !URL_RE.test(s.webhookUrl))
    bad("spec.webhookUrl: must be https, or http on localhost, without credentials or fragment");
  else {
    try {
      new URL(s.webhookUrl);
    } catch {
      bad("spec.webhookUrl: is not a URL (WHATWG)");
    }
  }
  return refusals.length > 0 ? { refusals } : { agentId: s.agentId as string, webhookUrl: s.webhookUrl as string, refusals };
}

/**
 * Releases the claims of `self` on its subscriptions other than `keep`, and deactivates each one
 * no resource claims any more; answers the ids deactivated.
 */
async function releaseOthers(pool: Pool, self: WritResource, orgId: string, keep: string | undefined): Promise<string[]> {
  const uid = resourceOwner(self, "Subscription").uid;
  const gone: string[] = [];
  for (const id of await claimsOf(pool, "subscription", uid, null)) {
    if (id === keep) continue;
    const off = await withTransaction(pool, async (c) =>
      (await releaseSubscriptionClaim(c, id, uid)) === 0 ? deactivateSubscription(c, orgId, id) : undefined,
    );
    if (off) gone.push(id);
  }
  return gone;
}

/** True when a resource other than `self` (not being deleted) still uses subscription `id`. */
function usedElsewhere(ctx: ReconcileContext, self: WritResource, id: string): boolean {
  return ctx.caches.subscriptions
    .list()
    .some((o) => o.metadata.uid !== self.metadata.uid && !o.metadata.deletionTimestamp && (storedRecordId(o) === id || o.status?.subscriptionId === id));
}

/** The reads of the Subscription reconciler (Postgres and the namespace bindings in the controller; a fake in unit tests). */
export interface SubscriptionReads {
  /** The namespace's organization (or why it has none). */
  binding(namespace: string): Promise<Binding>;
  /** True when agent `agentId` is registered (in any organization). */
  agentRegistered(agentId: string): Promise<boolean>;
}

/** The reads against Postgres (`pool`) and the namespace bindings. */
export function pgSubscriptionReads(pool: Pool, bindings: Pick<SubscriptionReads, "binding">): SubscriptionReads {
  return {
    binding: (ns) => bindings.binding(ns),
    agentRegistered: async (id) => (await getAgent(pool, id)) !== undefined,
  };
}

/** What `planSubscriptionStore` judges a spec on. */
export interface SubscriptionFacts {
  spec: { agentId?: string; webhookUrl?: string; refusals: readonly Refusal[] };
  binding: Binding;
  /** Whether the agent is registered (undefined when the spec names none). */
  agentRegistered: boolean | undefined;
}

/** Reads what `planSubscriptionStore` needs for the resource's `spec` in `namespace`. */
export async function gatherSubscriptionFacts(reads: SubscriptionReads, namespace: string, spec: unknown): Promise<SubscriptionFacts> {
  const checked = checkSubscriptionSpec(spec);
  const binding = await reads.binding(namespace);
  const agentRegistered = checked.agentId !== undefined ? await reads.agentRegistered(checked.agentId) : undefined;
  return { spec: checked, binding, agentRegistered };
}

/** Plans a spec (pure): every refusal, and the subscription to create when nothing is refused. */
export function planSubscriptionStore(f: SubscriptionFacts): {
  refusals: Refusal[];
  create?: { org_id: string; agent_id: string; webhook_url: string };
} {
  const { spec, binding } = f;
  const refusals = [...spec.refusals];
  if (!binding.ok) refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: binding.message });
  if (spec.agentId !== undefined && f.agentRegistered === false) {
    refusals.push({ condition: "Valid", code: "AGENT_NOT_ACTIVE", message: `spec.agentId: agent ${spec.agentId} is not registered` });
  }
  if (binding.ok && refusals.length === 0 && spec.agentId !== undefined && spec.webhookUrl !== undefined)
    return { refusals, create: { org_id: binding.orgId, agent_id: spec.agentId, webhook_url: spec.webhookUrl } };
  return { refusals };
}

/** What the status of a Subscription is planned from (pure): the refusals, the binding and the subscription stored, if any. */
export interface SubscriptionStatusFacts {
  namespace: string;
  generation: number | undefined;
  binding: Binding;
  refusals: readonly Refusal[];
  spec: { agentId?: string; webhookUrl?: string };
  subscriptionId: string | undefined;
}

/** The conditions and fields of a Subscription's status: Ready when the registry subscription exists and nothing is refused. */
export function planSubscriptionStatus(f: SubscriptionStatusFacts): { conditions: DesiredCondition[]; fields: Record<string, unknown> } {
  const { refusals, binding, subscriptionId, spec } = f;
  const refused = refusals.length > 0;
  const conditions: DesiredCondition[] = [
    conditionOf("Valid", refusals, { reason: "Validated", message: "the spec validates and the agent is registered" }),
    conditionOf("Bound", refusals, { reason: "Bound", message: binding.ok ? `namespace ${f.namespace} is bound to ${binding.orgId}` : "" }),
    subscriptionId
      ? { type: "Stored", status: "True", reason: "Stored", message: `registry subscription ${subscriptionId}` }
      : { type: "Stored", status: "False", reason: refusals[0]?.code ?? "NotStored", message: `generation ${f.generation ?? 0} is not stored` },
    refused || !subscriptionId
      ? { type: "Ready", status: "False", reason: refusals[0]?.code ?? "NotStored", message: summary(refusals) || "not stored" }
      : { type: "Ready", status: "True", reason: "Reconciled", message: `alerts about ${spec.agentId ?? ""} go to ${spec.webhookUrl ?? ""}` },
  ];
  return { conditions, fields: { phase: refused ? "Invalid" : subscriptionId ? "Ready" : "Pending", subscriptionId } };
}

/** Reconciles the Subscription `key` (`namespace/name`). */
export async function reconcileSubscription(ctx: ReconcileContext, key: string): Promise<ReconcileResult> {
  const { namespace = "", name } = splitKey(key);
  const obj = ctx.caches.subscriptions.get(namespace, name);
  if (!obj) return {};
  if (obj.metadata.deletionTimestamp) return finalize(ctx, obj);
  return reportingStoreOutage(ctx, SUBSCRIPTIONS, KIND, obj, CONDITION_TYPES, () => reconcileObject(ctx, key, namespace, obj));
}

/** The reconcile of a resource that is not being deleted. */
async function reconcileObject(ctx: ReconcileContext, key: string, namespace: string, obj: WritResource): Promise<ReconcileResult> {
  const now = ctx.clock.now();
  const reads = pgSubscriptionReads(ctx.pool, { binding: (ns) => ctx.bindings.resolve(ns) });
  const facts = await gatherSubscriptionFacts(reads, namespace, obj.spec);
  const { binding, spec } = facts;
  const { refusals, create } = planSubscriptionStore(facts);
  let subscriptionId: string | undefined;
  if (create) {
    await ensureFinalizer(ctx.client, SUBSCRIPTIONS, obj);
    const owner = resourceOwner(obj, "Subscription");
    const { subscription } = await withTransaction(ctx.pool, async (c) => {
      const made = await createSubscription(c, create, new Date(now));
      await claimRecord(c, "subscription", made.subscription.subscription_id, owner, null);
      return made;
    });
    subscriptionId = subscription.subscription_id;
    await releaseOthers(ctx.pool, obj, create.org_id, subscriptionId);
  }
  const status = planSubscriptionStatus({ namespace, generation: obj.metadata.generation, binding, refusals, spec, subscriptionId });
  await report(ctx, SUBSCRIPTIONS, KIND, obj, status.fields, status.conditions);
  if (refusals.some((r) => r.code === "NAMESPACE_NOT_BOUND" || r.code === "AGENT_NOT_ACTIVE")) return { requeueAfterMs: UNBOUND_RETRY_MS };
  return {};
}

/** Deletion: deactivate the subscription (unless another resource uses it), then let the resource go. */
async function finalize(ctx: ReconcileContext, obj: WritResource): Promise<ReconcileResult> {
  if (!hasFinalizer(obj)) return {};
  const id = storedRecordId(obj);
  const org = await ctx.bindings.labelledOrg(obj.metadata.namespace ?? "");
  if (org !== undefined) {
    const gone = await releaseOthers(ctx.pool, obj, org, undefined);
    // Declared before claims were recorded: the annotation's subscription, when no resource claims it.
    if (id !== undefined && !gone.includes(id) && (await claimCount(ctx.pool, "subscription", id)) === 0 && !usedElsewhere(ctx, obj, id)) {
      if (await deactivateSubscription(ctx.pool, org, id)) gone.push(id);
    }
    for (const g of gone) ctx.events.record(obj, KIND, "Normal", "Revoked", `deleted: registry subscription ${g} deactivated`);
  }
  await removeFinalizer(ctx.client, SUBSCRIPTIONS, obj);
  return {};
}
