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
import { silentExtension } from "../../core/delegation/index.js";
import type { Delegation } from "../../core/delegation/index.js";
import { loadDelegation, loadStoredChain, upsertDelegation, type StoredDelegation, type UpsertDelegationResult } from "../../store/delegations.js";
import { recordRevocation } from "../../store/revocation-record.js";
import { withTransaction } from "../../store/pool.js";
import { RecordStoreError } from "../../store/record-errors.js";
import { mandateHash } from "../../core/agreement/index.js";
import { splitKey } from "../../sources/kubernetes/objects.js";
import type { DesiredCondition } from "../conditions.js";
import { writRef } from "../../sources/kubernetes/writ-refs.js";
import type { WritResource } from "../kinds.js";
import { UNBOUND_RETRY_MS } from "../../sources/kubernetes/namespace-binding.js";
import { ensureFinalizer, resourceOwner, storedRecordId } from "../resource-writes.js";
import type { RecordOwner } from "../../store/record-owners.js";
import { claimOrRefuse, foreignOwnerRefusal, ownedBy, RecordNotOwnedError } from "./ownership.js";
import type { ReconcileResult } from "../runner.js";
import { summary, type Refusal } from "../spec-errors.js";
import { revokedDelegationIds } from "../../store/status-reads.js";
import { fullySigned } from "./agreement-checks.js";
import { agreementLogBody, ensureAgreementLogged } from "./agreement-log.js";
import { controllerLogging, loggedText } from "./revocation-log.js";
import { finalizeRevoking } from "./finalize.js";
import { inForce, revokedMessage, storedCondition, suspendedNote } from "./delegation-status.js";
import { conditionOf, delegationIdOf, enqueueAgreementsOf, enqueueBelow, phaseOf, type ReconcileContext, report, reportingStoreOutage, requeueAt } from "./context.js";
import { checkDelegationSpec, delegationView, storedChainRefusals, type DelegationView } from "./delegation-checks.js";
import { checkMandateSpec, isMandateSpec, reconcileMandateDelegation } from "./delegation-mandate.js";
import { prepareAgreement } from "../../core/agreement/index.js";

/** The resource reference of Delegations. */
export const DELEGATIONS = writRef("delegations");
/** The conditions of this kind, in order. */
const CONDITION_TYPES = ["Valid", "ChainValid", "Bound", "Stored", "Ready"];
const KIND = "Delegation";

const STORE_REFUSALS: Record<string, Refusal["code"]> = { RECORD_INVALID: "SPEC_INVALID", LEDGER_INVALID: "LEDGER_CHAIN_BROKEN", LEDGER_CONFLICT: "LEDGER_CHAIN_BROKEN", ACK_KEY_UNREGISTERED: "ACKNOWLEDGEMENT_KEY_UNREGISTERED" };

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
    await claimOrRefuse(c, "delegation", record.delegation_id, owner, "spec.delegation_id");
    if (record.intent_agreement) await claimOrRefuse(c, "agreement", record.intent_agreement.agreement_id, owner, "spec.intent_agreement.agreement_id");
    const r = await upsertDelegation(c, record, { orgId, at });
    const out: StoreOutcome = { upserted: r };
    const embedded = record.intent_agreement;
    if (embedded && ctx.logSigner && fullySigned(await prepareAgreement(embedded, { now }))) {
      const body = agreementLogBody(embedded.agreement_id, record.delegation_id, embedded.mandates.map((m) => mandateHash(m)));
      await ensureAgreementLogged(c, body, ctx.logSigner, { now: at, ...(ctx.logOrigin !== undefined ? { origin: ctx.logOrigin } : {}) });
    }
    // Only the revocation the record itself declares: one inherited from a link above (or made
    // before, over HTTP) was logged when it was made.
    const origin = { source: "kubernetes" as const, resource };
    if (r.revocation?.declared) {
      const body = { delegation_id: record.delegation_id, ids: r.revocation.ids, reason: r.revocation.reason, by: "principal" as const, at: r.revocation.at.toISOString(), ...origin };
      out.revocationSequence = (await recordRevocation(c, body, controllerLogging(ctx, at))) ?? undefined;
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
      await recordRevocation(c, body, controllerLogging(ctx, at));
    }
    return out;
  });
}

/** The Stored condition, saying when the embedded agreement's declared ledger was ignored (the service keeps the ledger). */
function withLedgerNote(c: DesiredCondition, ignored: string | undefined): DesiredCondition {
  return ignored !== undefined && c.status === "True" ? { ...c, message: `${c.message}; embedded agreement: ${ignored}` } : c;
}

/** Ready from the stored state (no refusals). */
function readyOf(record: Delegation, stored: StoredDelegation, view: DelegationView, revoked: ReadonlySet<string>): DesiredCondition {
  const declared = record.status;
  const ok = (message: string): DesiredCondition => ({ type: "Ready", status: "True", reason: "Reconciled", message });
  if (stored.revokedAt && declared !== "revoked") {
    const link = record.delegation_chain.find((l) => revoked.has(l.delegation_id));
    return link
      ? { type: "Ready", status: "False", reason: "CHAIN_LINK_REVOKED", message: `link ${link.delegation_id} above this grant is revoked, which revokes it (${stored.revokedReason ?? "revoked"})` }
      : { type: "Ready", status: "False", reason: "DELEGATION_REVOKED", message: revokedMessage(stored) };
  }
  if (view.effective === "expired" && declared !== "expired") {
    const link = view.chainFindings.find((f) => f.code === "CHAIN_LINK_EXPIRED");
    return link
      ? { type: "Ready", status: "False", reason: "CHAIN_LINK_EXPIRED", message: link.message }
      : { type: "Ready", status: "False", reason: "DELEGATION_EXPIRED", message: `delegation ${stored.delegationId} expired at ${record.expires_at}; a renewal is a new grant` };
  }
  return ok(`stored as delegation ${stored.delegationId}; effective status ${view.effective}${suspendedNote(view)}`);
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

/** The reconcile of a resource that is not being deleted. */
async function reconcileObject(ctx: ReconcileContext, key: string, namespace: string, obj: WritResource): Promise<ReconcileResult> {
  const now = ctx.clock.now();
  const check = await checkDelegationSpec(obj.spec, now);
  const refusals: Refusal[] = [...check.refusals];
  const binding = await ctx.bindings.resolve(namespace);
  if (!binding.ok) refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: binding.message });
  const record = check.record;
  const declaredId = storedRecordId(obj);
  const owner = resourceOwner(obj, "Delegation");
  let stored: StoredDelegation | undefined;
  /** A link the chain cites is not stored (yet): retried, and queued when the parent is stored. */
  let awaitingParent = false;
  if (!record && binding.ok && declaredId !== undefined) {
    // This generation does not validate: what verify enforces is what this resource stored before.
    stored = await loadDelegation(ctx.pool, declaredId);
    if (stored && (stored.orgId !== binding.orgId || !(await ownedBy(ctx.pool, "delegation", declaredId, owner)))) stored = undefined;
  }
  if (record) {
    if (declaredId !== undefined && declaredId !== record.delegation_id) {
      refusals.push({
        condition: "Valid",
        code: "SPEC_INVALID",
        message: `spec.delegation_id is immutable: this resource declared ${declaredId}; a new grant (${record.delegation_id}) is a new resource`,
      });
    }
    if (binding.ok) {
      if ((await ctx.bindings.agentOrg(record.agent.agent_id)) !== binding.orgId) {
        refusals.push({
          condition: "Bound",
          code: "NAMESPACE_NOT_BOUND",
          message: `spec.agent.agent_id: agent ${record.agent.agent_id} is not registered to ${binding.orgId}, the organization namespace ${namespace} is bound to`,
        });
      }
      stored = await loadDelegation(ctx.pool, declaredId ?? record.delegation_id);
      const foreign = [
        await foreignOwnerRefusal(ctx.pool, "delegation", declaredId ?? record.delegation_id, owner, "spec.delegation_id"),
        record.intent_agreement ? await foreignOwnerRefusal(ctx.pool, "agreement", record.intent_agreement.agreement_id, owner, "spec.intent_agreement.agreement_id") : undefined,
      ].filter((r) => r !== undefined);
      if (foreign.length > 0) {
        refusals.push(...foreign);
        stored = undefined;
      } else if (stored && stored.orgId !== binding.orgId) {
        refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: `spec.delegation_id: ${record.delegation_id} is stored for another organization` });
        stored = undefined;
      } else if (stored && !stored.revokedAt) {
        const why = silentExtension(stored.record, record);
        if (why !== undefined) refusals.push({ condition: "Valid", code: "SPEC_INVALID", message: `refused as a silent extension: ${why}` });
      }
      if (record.delegation_chain.length > 0 && check.prepared) {
        // A link cites a stored delegation; its declared copy is judged against it, never trusted.
        const ancestors = await loadStoredChain(ctx.pool, record.delegation_chain.map((l) => l.delegation_id));
        refusals.push(...storedChainRefusals(check.prepared, binding.orgId, ancestors));
        awaitingParent = ancestors.some((a) => a === undefined);
      }
    }
  }

  const wasRevoked = stored?.revokedAt != null;
  let upserted: UpsertDelegationResult | undefined;
  if (record && binding.ok && refusals.length === 0) {
    await ensureFinalizer(ctx.client, DELEGATIONS, obj, record.delegation_id);
    try {
      const outcome = await store(ctx, record, binding.orgId, now, key, owner);
      upserted = outcome.upserted;
      const made = upserted.revocation?.declared ? upserted.revocation : undefined;
      if (made) {
        const logged = loggedText(outcome.revocationSequence);
        ctx.events.record(obj, KIND, "Normal", "Revoked", `spec.state revoked: delegation ${record.delegation_id} revoked with everything below it (${made.ids.length} record(s)); ${logged}`);
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
    if (upserted?.revoked) stored = await loadDelegation(ctx.pool, record.delegation_id);
    else if (upserted) {
      // Stored live as given (the store keeps the record without its embedded agreement).
      const { intent_agreement: _embedded, ...kept } = record;
      stored = {
        delegationId: record.delegation_id, generation: upserted.generation, orgId: binding.orgId, agentId: record.agent.agent_id, status: record.status,
        revokedAt: null, revokedReason: null, revokedBy: null, parentDelegationId: record.delegation_chain.at(-1)?.delegation_id ?? null, record: kept,
      };
    }
  }

  // What verify answers now: the stored record of this resource, whatever this generation declares.
  const revoked = stored?.revokedAt ? await revokedDelegationIds(ctx.pool, [stored.delegationId, ...stored.record.delegation_chain.map((l) => l.delegation_id)]) : new Set<string>();
  const view = stored ? delegationView(stored.record, now, revoked) : undefined;
  const refused = refusals.length > 0;
  const chainDepth = record?.delegation_chain.length;
  const conditions: DesiredCondition[] = [
    conditionOf("Valid", refusals, { reason: "Validated", message: "the spec validates; its times, scope and conditions are well-formed" }),
    record
      ? conditionOf("ChainValid", refusals, {
          reason: "ChainIntact",
          message: chainDepth ? `${chainDepth} link(s) connect the principal to the agent, each only narrowing` : "a direct grant from the principal",
        })
      : { type: "ChainValid", status: "Unknown", reason: "NotChecked", message: "the spec does not validate" },
    conditionOf("Bound", refusals, { reason: "Bound", message: binding.ok ? `namespace ${namespace} is bound to ${binding.orgId}` : "" }),
    withLedgerNote(storedCondition(obj.metadata.generation, refusals, refused, stored, "the record stored before"), upserted?.agreement?.ledgerIgnored),
    refused || !stored || !record || !view
      ? {
          type: "Ready",
          status: "False",
          reason: refusals[0]?.code ?? "NotStored",
          message: `${summary(refusals) || "not stored"}${stored && view ? `; ${inForce(stored, view)}` : refused ? "; nothing is stored for this resource, so verify knows no such grant" : ""}`,
        }
      : readyOf(record, stored, view, revoked),
  ];
  await report(ctx, DELEGATIONS, KIND, obj, {
    // What verify enforces for this resource's record; Invalid only when nothing is stored.
    phase: view ? phaseOf(view.effective) : refused ? "Invalid" : "Pending",
    effectiveStatus: view?.effective,
    expiresAt: view && Number.isFinite(view.expiresAtMs) && view.expiresAtMs > 0 ? new Date(view.expiresAtMs).toISOString() : undefined,
    chainDepth,
    revokedAt: stored?.revokedAt ? stored.revokedAt.toISOString() : undefined,
  }, conditions);

  if (stored && record && (upserted?.created || upserted?.changed)) enqueueAgreementsOf(ctx, namespace, obj.metadata.name);
  if (stored?.revokedAt && !wasRevoked) enqueueBelow(ctx, stored.delegationId);
  // A child declared before its parent was stored is judged again now.
  else if (upserted?.created && record) enqueueBelow(ctx, record.delegation_id);
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
    load: (c, id) => loadDelegation(c.pool, id),
    target: (id) => ({ kind: "delegation", id }),
    describe: (ids) => ` with everything below it (${ids.length} record(s))`,
    after: (c, o, id) => {
      enqueueBelow(c, id);
      enqueueAgreementsOf(c, o.metadata.namespace ?? "", o.metadata.name);
    },
  });
}
