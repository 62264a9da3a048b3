/**
 * The IntentAgreement reconciler: declared agreement -> Postgres (`upsertAgreement`, the API's
 * store function) + the transparency log -> `.status`.
 *
 * Order: the spec is checked (`checkAgreementSpec`: schema, signatures, hash chains, limits);
 * the namespace must be bound to an active organization; `spec.agreement_id` must be the id this
 * resource stored before; `spec.delegationRef.name` must name a Delegation in the namespace whose
 * record is stored for the same organization (until it is, the agreement is Pending:
 * `DelegationNotReady`, and it is queued again when that Delegation is stored); the mandates must
 * fit that delegation (principal key, agent, bound intents). Then, in ONE transaction, the
 * agreement is upserted bound to the delegation's `delegation_id` and, when every mandate is
 * signed, its mandate hashes are logged once (`ensureAgreementLogged`).
 *
 * The service owns the ledger: `spec.ledger` is imported only when this creates the agreement
 * (counted at face value, its action_ids spent: src/store/ledger/import.ts); afterwards it is
 * never written, and the Stored condition says so when it is not a prefix of the stored one.
 *
 * Conditions: Valid, Signed, Bound, Stored, Logged, Ready. Phase: Pending, Invalid, or the
 * effective status (revoked when the store, a pushed principal revocation or a verified carried
 * revocation says so; expired once every mandate has). Without SVC_LOG_SIGNING_SEED a signed
 * agreement is stored but not logged (`Ready=False`, reason `LogNotConfigured`). Deletion
 * (finalizer) revokes the stored agreement when it belongs to the namespace's organization and
 * to this resource. An agreement another resource created (its stored owner, ./ownership.ts)
 * is refused RECORD_NOT_OWNED whatever the `writ.dev/record-id` annotation says.
 * A revocation this reconciler makes (declared revoked, or deletion) appends ONE `revocation`
 * log entry in the same transaction, only when this call newly revoked it (`revocation-log.ts`).
 */
import { upsertAgreement, logAndAlertRevocation, withTransaction, RecordStoreError, agreementRow } from "../../store/index.js";
import { splitKey, writRef, UNBOUND_RETRY_MS } from "../../sources/kubernetes/index.js";
import type { DesiredCondition } from "../conditions.js";
import type { WritResource } from "../kinds.js";
import { ensureFinalizer, resourceOwner, storedRecordId } from "../resource-writes.js";
import { claimOrRefuse, RecordNotOwnedError } from "./ownership.js";
import type { ReconcileResult } from "../runner.js";
import type { Refusal } from "../spec-errors.js";
import { checkAgreementSpec, fullySigned } from "./agreement-checks.js";
import { gatherAgreementFacts, gatherEnforcedFacts, pgAgreementReads, planAgreementStore } from "./agreement-gather.js";
import { agreementLogBody, ensureAgreementLogged } from "./agreement-log.js";
import { controllerLogging, loggedText } from "./revocation-log.js";
import { finalizeRevoking } from "./finalize.js";
import { agreementReadiness, effectiveOf, enforcedOf } from "./agreement-plan.js";
import { conditionOf, delegationIdOf, phaseOf, type ReconcileContext, report, reportingStoreOutage, requeueAt } from "./context.js";

/** The resource reference of IntentAgreements. */
export const AGREEMENTS = writRef("intentagreements");
/** The conditions of this kind, in order. */
const CONDITION_TYPES = ["Valid", "Signed", "Bound", "Stored", "Logged", "Ready"];
const KIND = "IntentAgreement";
/** Retry of an agreement whose Delegation is not stored yet (it is also queued when the Delegation is). */
const PENDING_RETRY_MS = 15_000;

const STORE_REFUSALS: Record<string, Refusal["code"]> = {
  RECORD_INVALID: "SPEC_INVALID",
  LEDGER_INVALID: "LEDGER_CHAIN_BROKEN",
  LEDGER_CONFLICT: "LEDGER_CHAIN_BROKEN",
  ACK_KEY_UNREGISTERED: "ACKNOWLEDGEMENT_KEY_UNREGISTERED",
};

/** Reconciles the IntentAgreement `key` (`namespace/name`). */
export async function reconcileAgreement(ctx: ReconcileContext, key: string): Promise<ReconcileResult> {
  const { namespace = "", name } = splitKey(key);
  const obj = ctx.caches.agreements.get(namespace, name);
  if (!obj) return {};
  if (obj.metadata.deletionTimestamp) return finalize(ctx, obj);
  return reportingStoreOutage(ctx, AGREEMENTS, KIND, obj, CONDITION_TYPES, () => reconcileObject(ctx, key, namespace, obj));
}

/** The reconcile of a resource that is not being deleted. */
async function reconcileObject(ctx: ReconcileContext, key: string, namespace: string, obj: WritResource): Promise<ReconcileResult> {
  const now = ctx.clock.now();
  const check = await checkAgreementSpec(obj.spec, now);
  const reads = pgAgreementReads(ctx.pool, {
    binding: (ns) => ctx.bindings.resolve(ns),
    delegationRef: (ns, name) => {
      const target = ctx.caches.delegations.get(ns, name);
      return target ? delegationIdOf(target) : undefined;
    },
  });
  const owner = resourceOwner(obj, "IntentAgreement");
  const facts = await gatherAgreementFacts(reads, { namespace, check, declaredId: storedRecordId(obj), owner });
  const plan = planAgreementStore(facts);
  const { binding } = facts;
  const { record, prepared } = check;
  const { refusals, pending, delegation } = plan;
  let row = plan.row;

  const signed = prepared !== undefined && fullySigned(prepared);
  let logSequence: number | undefined;
  let stored = false;
  let ledgerIgnored: string | undefined;
  if (record && prepared && binding.ok && delegation && refusals.length === 0 && pending === undefined) {
    await ensureFinalizer(ctx.client, AGREEMENTS, obj, record.agreement_id);
    const known = typeof obj.status?.logSequence === "number" ? obj.status.logSequence : undefined;
    const bound = delegation;
    try {
      const { appended, revokedNow, revocationSequence, ignored } = await withTransaction(ctx.pool, async (c) => {
        const at = new Date(now);
        await claimOrRefuse(c, "agreement", binding.orgId, record.agreement_id, owner, "spec.agreement_id");
        const up = await upsertAgreement(c, record, { delegationId: bound.delegationId, orgId: binding.orgId, at });
        let appended = false;
        if (signed && ctx.logSigner) {
          const body = agreementLogBody(
            record.agreement_id,
            bound.delegationId,
            prepared.mandates.map((m) => m.hash),
          );
          const logged = await ensureAgreementLogged(c, body, ctx.logSigner, {
            now: at,
            ...(known !== undefined ? { knownSequence: known } : {}),
            ...(ctx.logOrigin !== undefined ? { origin: ctx.logOrigin } : {}),
          });
          logSequence = logged.sequence;
          appended = logged.appended;
        }
        // Declared revoked (with the principal's signed revocation, verified above): ONE entry, only when this call revoked it.
        let revocationSequence: number | null = null;
        if (up.revokedNow) {
          const body = {
            agreement_id: record.agreement_id,
            ids: [record.agreement_id],
            reason: record.revocation?.reason ?? "the record's status is revoked",
            by: record.revocation !== undefined ? ("principal" as const) : ("policy" as const),
            at: at.toISOString(),
            mandate_hashes: prepared.mandates.map((m) => m.hash),
            ...(record.revocation !== undefined ? { revocation: record.revocation } : {}),
            source: "kubernetes" as const,
            resource: key,
          };
          revocationSequence = await logAndAlertRevocation(c, body, controllerLogging(ctx, at), { agentId: up.agentId });
        }
        return { appended, revokedNow: up.revokedNow, revocationSequence, ignored: up.ledgerIgnored };
      });
      stored = true;
      ledgerIgnored = ignored;
      if (appended)
        ctx.events.record(obj, KIND, "Normal", "Logged", `transparency log entry ${logSequence} records the mandate hashes of ${record.agreement_id}`);
      if (revokedNow) {
        const logged = loggedText(revocationSequence);
        ctx.events.record(obj, KIND, "Normal", "Revoked", `declared revoked: agreement ${record.agreement_id} revoked; ${logged}`);
      }
    } catch (err) {
      if (err instanceof RecordNotOwnedError) {
        refusals.push(err.refusal);
        row = undefined;
      } else {
        if (!(err instanceof RecordStoreError) || !STORE_REFUSALS[err.code]) throw err;
        refusals.push({ condition: "Valid", code: STORE_REFUSALS[err.code] as Refusal["code"], message: err.message });
      }
    }
    if (stored && binding.ok) row = await reads.agreement(binding.orgId, record.agreement_id);
  }

  const refused = refusals.length > 0;
  // What verify answers now: the stored agreement under the delegation it is stored with (which
  // may be revoked or gone from the cluster), whatever this generation declares.
  const { bound, ancestors } = await gatherEnforcedFacts(reads, row, delegation);
  const enforced = row ? enforcedOf(row, bound, prepared, now, ancestors) : undefined;
  const eff = prepared ? effectiveOf(prepared, row, now) : undefined;
  const declared = record?.status;
  const noLog = signed && !ctx.logSigner;
  const inForce = enforced
    ? `; verify still answers with the agreement stored before: effective status ${enforced.status}${enforced.why ? ` (${enforced.why})` : ""}`
    : "";
  const ready = agreementReadiness({
    refusals,
    inForce,
    enforced,
    pending,
    stored,
    effective: eff,
    noLog,
    declared,
    agreementId: record?.agreement_id ?? "",
    revokedReason: row?.revokedReason ?? null,
  });
  const conditions: DesiredCondition[] = [
    conditionOf("Valid", refusals, { reason: "Validated", message: "the spec validates and fits its delegation" }),
    prepared
      ? conditionOf("Signed", refusals, { reason: "Verified", message: "every signature present verifies; event and ledger chains are intact" })
      : { type: "Signed", status: "Unknown", reason: "NotChecked", message: "the spec does not validate" },
    conditionOf("Bound", refusals, { reason: "Bound", message: binding.ok ? `namespace ${namespace} is bound to ${binding.orgId}` : "" }),
    stored
      ? {
          type: "Stored",
          status: "True",
          reason: "Stored",
          message: `stored as agreement ${record?.agreement_id ?? ""}, bound to delegation ${delegation?.delegationId ?? ""}${ledgerIgnored !== undefined ? `; ${ledgerIgnored}` : ""}`,
        }
      : {
          type: "Stored",
          status: "False",
          reason: refusals[0]?.code ?? (pending !== undefined ? "DelegationNotReady" : "NotStored"),
          message: `generation ${obj.metadata.generation ?? 0} is not stored${row ? "; the agreement stored before stays in force" : ""}`,
        },
    logSequence !== undefined
      ? { type: "Logged", status: "True", reason: "Logged", message: `transparency log entry ${logSequence} records the current mandate hashes` }
      : !signed
        ? { type: "Logged", status: "False", reason: "AwaitingSignatures", message: "mandate hashes are logged once every mandate is signed" }
        : {
            type: "Logged",
            status: "False",
            reason: noLog ? "LogNotConfigured" : "NotStored",
            message: noLog ? "SVC_LOG_SIGNING_SEED is unset" : "logged once stored",
          },
    ready,
  ];
  const effective = enforced?.status ?? (stored ? eff?.status : undefined);
  await report(
    ctx,
    AGREEMENTS,
    KIND,
    obj,
    {
      // What verify enforces for this resource's agreement; Invalid or Pending only when nothing is stored.
      phase: effective !== undefined ? phaseOf(effective) : refused ? "Invalid" : "Pending",
      effectiveStatus: effective,
      mandateHashes: prepared?.mandates.map((m) => m.hash),
      ledgerSequence: row?.ledgerSequence,
      ledgerHead: row?.ledgerHead ?? undefined,
      logSequence: logSequence ?? (typeof obj.status?.logSequence === "number" && !stored ? obj.status.logSequence : undefined),
    },
    conditions,
  );

  if (refusals.some((r) => r.code === "NAMESPACE_NOT_BOUND")) return { requeueAfterMs: UNBOUND_RETRY_MS };
  if (pending !== undefined && !row) return { requeueAfterMs: PENDING_RETRY_MS };
  if (ready.status === "True" && eff?.nextChangeMs !== undefined) return { requeueAfterMs: requeueAt(eff.nextChangeMs, now) };
  return {};
}

/** Deletion: revoke the stored agreement (same organization only), then let the resource go. */
function finalize(ctx: ReconcileContext, obj: WritResource): Promise<ReconcileResult> {
  return finalizeRevoking(ctx, obj, {
    kind: KIND,
    ref: AGREEMENTS,
    noun: "agreement",
    declared: (o) => {
      const id = (o.spec as { agreement_id?: unknown } | undefined)?.agreement_id;
      return typeof id === "string" && id !== "" ? id : undefined;
    },
    load: (c, org, id) => agreementRow(c.pool, id, org),
    target: (id, _org, stored) => ({ kind: "agreement", agentId: stored.agentId, id }),
  });
}
