/**
 * The Delegation reconciler: declared grant -> Postgres (`upsertDelegation`, the API's store
 * function) -> `.status`.
 *
 * Order: the spec is checked (`checkDelegationSpec`); the namespace must be bound to an active
 * organization and the agent registered to it; `spec.delegation_id` must be the id this resource
 * stored before (annotation `writ.dev/record-id`: a new grant is a new resource); a record stored
 * under that id must belong to the same organization and to THIS resource (its stored owner,
 * ./ownership.ts: a record another resource created is refused RECORD_NOT_OWNED, whatever the
 * annotation says), and an update must not silently extend it
 * (`silentExtension`: renewal is a new grant); a chain must cite delegations stored for the
 * same organization, its declared links must be exact copies of them and the grant must only
 * narrow its stored parent (`storedChainRefusals`; a link not stored yet is retried every 30 s
 * and when it is stored). Any refusal leaves Postgres untouched (a record
 * stored earlier stays in force) and is reported as `Ready=False` with its reason code.
 * Otherwise the finalizer is added and the record upserted (with its embedded agreement, whose
 * mandate hashes are logged once). `spec.state: revoked` revokes (the store revokes everything
 * below); the Delegations and IntentAgreements below are then queued so their status follows.
 *
 * Shape: gather (./delegation-gather.ts: every read behind one interface) -> plan
 * (./delegation-plan.ts, pure: `planStore` decides the refusals and whether to store,
 * `planStatus` the conditions, Ready by an ordered chain of readiness policies judged on the
 * record as stored and its chain as the stored parents give it) -> apply (here: the store
 * transaction, Events, the status write, what to queue next).
 *
 * Conditions: Valid, ChainValid, Bound, Stored, Ready. Phase: Invalid when refused, else the
 * effective status. A spec in the mandate form (`spec.mandate`) is reconciled by
 * ./delegation-mandate.ts instead. Requeued at the effective expiry and when a time condition can change; a
 * resource refused for its binding every 30 s. Deletion (finalizer `writ.dev/revoke`) revokes the
 * stored record when it belongs to the namespace's organization and to this resource; rows are
 * never deleted.
 *
 * Every revocation the controller makes (declared `spec.state: revoked`, a declared-revoked
 * embedded agreement, deletion) appends ONE `revocation` log entry in the same transaction, only
 * when the store reports that this call newly revoked something (`revocation-log.ts`).
 */
import type { Delegation } from "../../core/delegation/index.js";
import {
  loadDelegation,
  upsertDelegation,
  type UpsertDelegationResult,
  logAndAlertRevocation,
  withTransaction,
  RecordStoreError,
  type RecordOwner,
} from "../../store/index.js";
import { mandateHash, prepareAgreement } from "../../core/agreement/index.js";
import { splitKey, writRef, UNBOUND_RETRY_MS } from "../../sources/kubernetes/index.js";
import type { WritResource } from "../kinds.js";
import { ensureFinalizer, resourceOwner, storedRecordId } from "../resource-writes.js";
import { claimOrRefuse, RecordNotOwnedError } from "./ownership.js";
import type { ReconcileResult } from "../runner.js";
import type { Refusal } from "../spec-errors.js";
import { fullySigned } from "./agreement-checks.js";
import { agreementLogBody, ensureAgreementLogged } from "./agreement-log.js";
import { controllerLogging, loggedText } from "./revocation-log.js";
import { finalizeRevoking } from "./finalize.js";
import { delegationIdOf, enqueueAgreementsOf, enqueueBelow, type ReconcileContext, report, reportingStoreOutage, requeueAt } from "./context.js";
import { checkDelegationSpec } from "./delegation-checks.js";
import { gatherStatusFacts, gatherStoreFacts, pgDelegationReads } from "./delegation-gather.js";
import { planStatus, planStore } from "./delegation-plan.js";
import { checkMandateSpec, isMandateSpec, reconcileMandateDelegation } from "./delegation-mandate.js";

/** The resource reference of Delegations. */
export const DELEGATIONS = writRef("delegations");
/** The conditions of this kind, in order. */
const CONDITION_TYPES = ["Valid", "ChainValid", "Bound", "Stored", "Ready"];
const KIND = "Delegation";

const STORE_REFUSALS: Record<string, Refusal["code"]> = {
  RECORD_INVALID: "SPEC_INVALID",
  LEDGER_INVALID: "LEDGER_CHAIN_BROKEN",
  LEDGER_CONFLICT: "LEDGER_CHAIN_BROKEN",
  ACK_KEY_UNREGISTERED: "ACKNOWLEDGEMENT_KEY_UNREGISTERED",
};

/** What `store` did: the store's outcome and the revocation entries it appended. */
interface StoreOutcome {
  upserted: UpsertDelegationResult;
  /** Sequence of the delegation's `revocation` entry, when this call revoked it by its declared state and logged it. */
  revocationSequence?: number;
}

/**
 * Stores the record (logging an embedded signed agreement) in one transaction; when this call
 * revokes it (`spec.state: revoked`) or its embedded agreement (declared revoked), ONE
 * `revocation` entry per revoked record is appended in the same transaction.
 */
async function store(ctx: ReconcileContext, record: Delegation, orgId: string, now: number, resource: string, owner: RecordOwner): Promise<StoreOutcome> {
  return withTransaction(ctx.pool, async (c) => {
    const at = new Date(now);
    // The records are this resource's, or become it now; another resource's roll everything back.
    await claimOrRefuse(c, "delegation", orgId, record.delegation_id, owner, "spec.delegation_id");
    if (record.intent_agreement) await claimOrRefuse(c, "agreement", orgId, record.intent_agreement.agreement_id, owner, "spec.intent_agreement.agreement_id");
    const r = await upsertDelegation(c, record, { orgId, at });
    const out: StoreOutcome = { upserted: r };
    const embedded = record.intent_agreement;
    if (embedded && ctx.logSigner && fullySigned(await prepareAgreement(embedded, { now }))) {
      const body = agreementLogBody(
        embedded.agreement_id,
        record.delegation_id,
        embedded.mandates.map((m) => mandateHash(m)),
      );
      await ensureAgreementLogged(c, body, ctx.logSigner, { now: at, ...(ctx.logOrigin !== undefined ? { origin: ctx.logOrigin } : {}) });
    }
    // Only the revocation the record itself declares: one inherited from a link above (or made
    // before, over HTTP) was logged when it was made.
    const origin = { source: "kubernetes" as const, resource };
    if (r.revocation?.declared) {
      const body = {
        delegation_id: record.delegation_id,
        ids: r.revocation.ids,
        reason: r.revocation.reason,
        by: "principal" as const,
        at: r.revocation.at.toISOString(),
        ...origin,
      };
      out.revocationSequence = (await logAndAlertRevocation(c, body, controllerLogging(ctx, at), { orgId })) ?? undefined;
    }
    if (embedded && r.agreement?.revokedNow) {
      const body = {
        agreement_id: embedded.agreement_id,
        ids: [embedded.agreement_id],
        reason: embedded.revocation?.reason ?? "the record's status is revoked",
        by: embedded.revocation !== undefined ? ("principal" as const) : ("policy" as const),
        at: at.toISOString(),
        mandate_hashes: embedded.mandates.map((m) => mandateHash(m)),
        ...(embedded.revocation !== undefined ? { revocation: embedded.revocation } : {}),
        ...origin,
      };
      await logAndAlertRevocation(c, body, controllerLogging(ctx, at), { agentId: r.agreement.agentId });
    }
    return out;
  });
}

/** Reconciles the Delegation `key` (`namespace/name`). */
export async function reconcileDelegation(ctx: ReconcileContext, key: string): Promise<ReconcileResult> {
  const { namespace = "", name } = splitKey(key);
  const obj = ctx.caches.delegations.get(namespace, name);
  if (!obj) return {};
  if (obj.metadata.deletionTimestamp) return finalize(ctx, obj);
  return reportingStoreOutage(ctx, DELEGATIONS, KIND, obj, CONDITION_TYPES, () =>
    isMandateSpec(obj.spec) ? reconcileMandateDelegation(ctx, obj, key) : reconcileObject(ctx, key, namespace, obj),
  );
}

/** The reconcile of a resource that is not being deleted: gather -> plan -> apply, then the status the same way. */
async function reconcileObject(ctx: ReconcileContext, key: string, namespace: string, obj: WritResource): Promise<ReconcileResult> {
  const now = ctx.clock.now();
  const reads = pgDelegationReads(ctx.pool, { binding: (ns) => ctx.bindings.resolve(ns), agentOrg: (id) => ctx.bindings.agentOrg(id) });
  const owner = resourceOwner(obj, "Delegation");
  const check = await checkDelegationSpec(obj.spec, now);
  const facts = await gatherStoreFacts(reads, { namespace, now, check, declaredId: storedRecordId(obj), owner });
  const plan = planStore(facts);
  const { record, refusals, awaitingParent } = plan;
  const binding = facts.binding;
  let stored = plan.inForce;

  const wasRevoked = stored?.revokedAt != null;
  let upserted: UpsertDelegationResult | undefined;
  if (plan.store && record && binding.ok) {
    await ensureFinalizer(ctx.client, DELEGATIONS, obj, record.delegation_id);
    try {
      const outcome = await store(ctx, record, binding.orgId, now, key, owner);
      upserted = outcome.upserted;
      const made = upserted.revocation?.declared ? upserted.revocation : undefined;
      if (made) {
        const logged = loggedText(outcome.revocationSequence);
        ctx.events.record(
          obj,
          KIND,
          "Normal",
          "Revoked",
          `spec.state revoked: delegation ${record.delegation_id} revoked with everything below it (${made.ids.length} record(s)); ${logged}`,
        );
      }
    } catch (err) {
      if (err instanceof RecordNotOwnedError) {
        refusals.push(err.refusal);
        stored = undefined;
      } else {
        if (!(err instanceof RecordStoreError) || !STORE_REFUSALS[err.code]) throw err;
        refusals.push({ condition: "Valid", code: STORE_REFUSALS[err.code] as Refusal["code"], message: err.message });
      }
    }
    if (upserted?.revoked) stored = await loadDelegation(ctx.pool, record.delegation_id, record.agent.agent_id);
    else if (upserted) {
      // Stored live as given (the store keeps the record without its embedded agreement).
      const { intent_agreement: _embedded, ...kept } = record;
      stored = {
        delegationId: record.delegation_id,
        generation: upserted.generation,
        orgId: binding.orgId,
        agentId: record.agent.agent_id,
        status: record.status,
        revokedAt: null,
        revokedReason: null,
        revokedBy: null,
        parentDelegationId: record.delegation_chain.at(-1)?.delegation_id ?? null,
        record: kept,
      };
    }
  }

  // What verify answers now: the stored record of this resource, whatever this generation declares, its chain as stored.
  const { revoked, ancestors } = await gatherStatusFacts(reads, stored, facts);
  const status = planStatus({
    namespace,
    generation: obj.metadata.generation,
    now,
    binding,
    record,
    refusals,
    stored,
    revoked,
    ancestors,
    ledgerIgnored: upserted?.agreement?.ledgerIgnored,
  });
  await report(ctx, DELEGATIONS, KIND, obj, status.fields, status.conditions);

  const refused = refusals.length > 0;
  const view = status.view;
  if (stored && record && (upserted?.created || upserted?.changed)) enqueueAgreementsOf(ctx, namespace, obj.metadata.name);
  if (stored?.revokedAt && !wasRevoked) enqueueBelow(ctx, stored.delegationId);
  // A child declared before its parent was stored is judged again now, and so is every child
  // of a parent that changed (suspended, narrowed, shortened): their Ready follows the stored parent.
  else if ((upserted?.created || upserted?.changed) && record) enqueueBelow(ctx, record.delegation_id);
  if (refusals.some((r) => r.code === "NAMESPACE_NOT_BOUND") || (refused && awaitingParent)) return { requeueAfterMs: UNBOUND_RETRY_MS };
  if (!refused && view?.nextChangeMs !== undefined) return { requeueAfterMs: requeueAt(view.nextChangeMs, now) };
  return {};
}

/** Deletion: revoke the stored record and everything below it (same organization only), then let the resource go. */
function finalize(ctx: ReconcileContext, obj: WritResource): Promise<ReconcileResult> {
  return finalizeRevoking(ctx, obj, {
    kind: KIND,
    ref: DELEGATIONS,
    noun: "delegation",
    declared: async (o) => (isMandateSpec(o.spec) ? (await checkMandateSpec(o.spec)).recordId : delegationIdOf(o)),
    load: (c, org, id) => loadDelegation(c.pool, id, undefined, org),
    target: (id, org) => ({ kind: "delegation", orgId: org, id }),
    describe: (ids) => ` with everything below it (${ids.length} record(s))`,
    after: (c, o, id) => {
      enqueueBelow(c, id);
      enqueueAgreementsOf(c, o.metadata.namespace ?? "", o.metadata.name);
    },
  });
}
