/**
 * The mandate form of a Delegation: `spec: {mandate: {sdJwt, audience?, nonce?}, agent:
 * {agent_id}, state?}` (docs/mandates.md, "As a Kubernetes resource"). The controller verifies
 * the AP2 payment mandate exactly as `POST /v1/mandates` does (trusted issuer keys of wallet
 * organizations, every disclosure, the key binding to the registered agent's key, `exp`) and
 * records it (`recordMandate`) for the namespace's organization; verify then evaluates the
 * agent's actions against it.
 *
 * Order: the spec's shape (only mandate, agent and state `active`); the namespace bound to an
 * active organization and the agent registered to it; the mandate's delegation id (derived from
 * what the issuer signed) is the one this resource recorded before (annotation
 * `writ.dev/record-id`: another mandate is a new resource). A mandate recorded before (here or
 * over HTTP, by this organization, for this agent) is not verified again: a key-binding JWT is
 * fresh only for minutes, a resource lives longer. Otherwise it is verified and recorded, with
 * one `agreement` log entry when SVC_LOG_SIGNING_SEED is set. Refusals are `Ready=False` with
 * SPEC_INVALID (the mandate's own code in the message) or NAMESPACE_NOT_BOUND, and write
 * nothing. Deletion revokes through the Delegation finalizer, as for any Delegation; a mandate is
 * withdrawn by deleting its resource (or `DELETE /svc/delegations/{id}`), never by editing it.
 */
import { canonicalJson } from "../../core/canonical/index.js";
import { MANDATE_FIELD } from "../../core/crd/index.js";
import { decodeMandatePresentation, mandateDelegationId } from "../../core/mandates/index.js";
import { getAgent, loadDelegation, type StoredDelegation, revokedDelegationIds, claimRecord } from "../../store/index.js";
import { checkPresentedMandate, recordAcceptedMandate, refusalText } from "../../verify/index.js";
import { splitKey, UNBOUND_RETRY_MS, writRef } from "../../sources/kubernetes/index.js";
import type { DesiredCondition } from "../conditions.js";
import type { WritResource } from "../kinds.js";
import { ensureFinalizer, resourceOwner, storedRecordId } from "../resource-writes.js";
import { foreignOwnerRefusal, notOwnedRefusal, ownedBy } from "./ownership.js";
import type { ReconcileResult } from "../runner.js";
import { summary, type Refusal } from "../spec-errors.js";
import { conditionOf, phaseOf, report, requeueAt, type ReconcileContext } from "./context.js";
import { delegationView } from "./delegation-checks.js";
import { inForce, revokedMessage, storedCondition, suspendedNote } from "./delegation-status.js";

const DELEGATIONS = writRef("delegations");
const KIND = "Delegation";
/** Defaults of the key-binding checks when the context names none (as `writ serve`'s). */
const DEFAULT_CHECKS = { audience: "writ", kbMaxAgeMs: 300_000 };

/** The Delegation CRD's defaults of record fields (crds/writ.dev_delegations.yaml). */
const CRD_DEFAULTS: Record<string, unknown> = { conditions: [], delegation_chain: [], revocable: true };

/** What the mandate form declares. */
interface MandateSpec {
  sdJwt: string;
  audience?: string;
  nonce?: string;
  agentId: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const invalid = (message: string): Refusal => ({ condition: "Valid", code: "SPEC_INVALID", message });

/** True when a Delegation's spec is the mandate form. */
export function isMandateSpec(spec: unknown): boolean {
  return isObj(spec) && MANDATE_FIELD in spec;
}

/** The declared mandate, or the refusal of a malformed spec. */
function readSpec(spec: Record<string, unknown>): MandateSpec | Refusal {
  // The API server fills the CRD's defaults in: those values are not declarations.
  const extra = Object.keys(spec).filter(
    (k) => k !== MANDATE_FIELD && k !== "agent" && k !== "state" && !(k in CRD_DEFAULTS && canonicalJson(spec[k]) === canonicalJson(CRD_DEFAULTS[k])),
  );
  if (extra.length > 0)
    return invalid(`spec.${extra[0] ?? ""}: the mandate form holds only mandate, agent and state; every other field comes from the mandate`);
  if (spec.state !== undefined && spec.state !== "active") {
    return invalid("spec.state: a mandate is withdrawn by deleting its resource (or DELETE /svc/delegations/{id}), so its state is active");
  }
  const m = spec[MANDATE_FIELD];
  const agent = spec.agent;
  if (!isObj(m) || typeof m.sdJwt !== "string" || m.sdJwt === "") return invalid("spec.mandate.sdJwt: the mandate's SD-JWT is required");
  for (const k of ["audience", "nonce"])
    if (m[k] !== undefined && (typeof m[k] !== "string" || m[k] === "")) return invalid(`spec.mandate.${k} must be a non-empty string`);
  if (!isObj(agent) || typeof agent.agent_id !== "string" || agent.agent_id === "" || Object.keys(agent).length !== 1) {
    return invalid("spec.agent: the mandate form names the registered agent as {agent_id}");
  }
  return {
    sdJwt: m.sdJwt,
    agentId: agent.agent_id,
    ...(typeof m.audience === "string" ? { audience: m.audience } : {}),
    ...(typeof m.nonce === "string" ? { nonce: m.nonce } : {}),
  };
}

/** Verifies and records the mandate for `orgId`; a refusal, or the stored delegation. */
async function record(ctx: ReconcileContext, obj: WritResource, spec: MandateSpec, orgId: string, now: number): Promise<Refusal | StoredDelegation> {
  const agent = await getAgent(ctx.pool, spec.agentId);
  if (!agent) return { condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: `spec.agent.agent_id: agent ${spec.agentId} is not registered` };
  const checks = ctx.mandates ?? DEFAULT_CHECKS;
  const at = new Date(now);
  const checked = await checkPresentedMandate(ctx.pool, {
    sdJwt: spec.sdJwt,
    agent,
    audience: spec.audience ?? checks.audience,
    kbMaxAgeMs: checks.kbMaxAgeMs,
    now: at,
    ...(spec.nonce !== undefined ? { nonce: spec.nonce } : {}),
  });
  if (!checked.ok) return invalid(`spec.mandate.sdJwt: ${refusalText(checked.refusals)}`);
  const a = checked.accepted;
  // The finalizer first: a recorded mandate is never left without the resource that revokes it.
  await ensureFinalizer(ctx.client, DELEGATIONS, obj, a.delegation.delegation_id);
  const log = ctx.logSigner ? { signer: ctx.logSigner, options: ctx.logOrigin !== undefined ? { now: at, origin: ctx.logOrigin } : { now: at } } : null;
  // The id it is stored under: a mandate recorded before keeps the id it was recorded with.
  const { delegationId } = await recordAcceptedMandate(ctx.pool, a, { sdJwt: spec.sdJwt, now: at, orgId }, log);
  ctx.events.record(
    obj,
    KIND,
    "Normal",
    "MandateRecorded",
    `payment mandate verified (issuer key ${a.verification.issuer.kid}) and recorded as delegation ${delegationId}`,
  );
  const stored = await loadDelegation(ctx.pool, delegationId, undefined, orgId);
  if (!stored) throw new Error(`delegation ${delegationId} was recorded but is not stored`);
  return stored;
}

/** What the spec of the mandate form declares, without the cluster or the database (admission runs it too). */
export interface MandateSpecCheck {
  refusals: Refusal[];
  /** The declared mandate, when the spec's shape is right. */
  spec?: MandateSpec;
  /** The delegation id the mandate records as (derived from what its issuer signed), when it decodes. */
  recordId?: string;
}

/**
 * Checks the mandate form's shape and decodes the presentation (no signature checks: those need
 * the issuer keys). `declared`: the resource's `writ.dev/record-id`; a resource that recorded
 * its mandate before migration 0220 keeps that id, which was derived from the text of the same
 * presentation (sha256 of the whole issuer JWT).
 */
export async function checkMandateSpec(raw: unknown, declared?: string): Promise<MandateSpecCheck> {
  const spec = readSpec(isObj(raw) ? raw : {});
  if ("code" in spec) return { refusals: [spec] };
  const decoded = await decodeMandatePresentation(spec.sdJwt);
  if ("problem" in decoded) return { refusals: [invalid(`spec.mandate.sdJwt: ${refusalText([decoded.problem])}`)], spec };
  const legacy = mandateDelegationId(decoded.decoded.issuerJwtHash);
  return { refusals: [], spec, recordId: declared !== undefined && declared === legacy ? legacy : mandateDelegationId(decoded.decoded.mandateHash) };
}

/** The refusal of a resource that recorded `declared` and now declares another mandate (`id`). */
export function mandateImmutable(declared: string | undefined, id: string | undefined): Refusal[] {
  if (declared === undefined || id === undefined || declared === id) return [];
  return [invalid(`spec.mandate is immutable: this resource recorded ${declared}; another mandate (${id}) is a new resource`)];
}

/** Reconciles a Delegation in the mandate form (see the module comment). */
export async function reconcileMandateDelegation(ctx: ReconcileContext, obj: WritResource, key: string): Promise<ReconcileResult> {
  const { namespace = "" } = splitKey(key);
  const now = ctx.clock.now();
  const declared = storedRecordId(obj);
  const { refusals, spec, recordId: id } = await checkMandateSpec(obj.spec, declared);
  const binding = await ctx.bindings.resolve(namespace);
  if (!binding.ok) refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: binding.message });
  const owner = resourceOwner(obj, "Delegation");
  refusals.push(...mandateImmutable(declared, id));
  let stored: StoredDelegation | undefined;
  if (spec && id !== undefined && binding.ok && refusals.length === 0) {
    if ((await ctx.bindings.agentOrg(spec.agentId)) !== binding.orgId) {
      refusals.push({
        condition: "Bound",
        code: "NAMESPACE_NOT_BOUND",
        message: `spec.agent.agent_id: agent ${spec.agentId} is not registered to ${binding.orgId}, the organization namespace ${namespace} is bound to`,
      });
    } else {
      const before = await loadDelegation(ctx.pool, id, undefined, binding.orgId);
      const foreign = await foreignOwnerRefusal(ctx.pool, "delegation", binding.orgId, id, owner, "spec.mandate");
      if (foreign) refusals.push(foreign);
      else if (before && (before.orgId !== binding.orgId || before.agentId !== spec.agentId)) {
        refusals.push({ condition: "Bound", code: "NAMESPACE_NOT_BOUND", message: `spec.mandate: ${id} is recorded for another organization or agent` });
      } else if (before) {
        await ensureFinalizer(ctx.client, DELEGATIONS, obj, id);
        stored = before;
      } else {
        const r = await record(ctx, obj, spec, binding.orgId, now);
        if ("code" in r) refusals.push(r);
        else stored = r;
      }
      // The recorded mandate is this resource's from now on (one recorded over HTTP, or by no
      // resource yet, becomes it); when another resource claimed it meanwhile, nothing is.
      if (stored) {
        const claim = await claimRecord(ctx.pool, "delegation", id, owner, binding.orgId);
        if (!claim.ok) {
          refusals.push(notOwnedRefusal("delegation", id, claim.owner, "spec.mandate"));
          stored = undefined;
        }
      }
    }
  }
  if (!stored && refusals.length > 0 && binding.ok && declared !== undefined) {
    // This generation is refused: what verify enforces is what this resource recorded before.
    const before = await loadDelegation(ctx.pool, declared, undefined, binding.orgId);
    if (before && (await ownedBy(ctx.pool, "delegation", binding.orgId, declared, owner))) stored = before;
  }

  const revoked = stored?.revokedAt ? await revokedDelegationIds(ctx.pool, stored.orgId, [stored.delegationId]) : new Set<string>();
  const view = stored ? delegationView(stored.record, now, revoked) : undefined;
  const refused = refusals.length > 0;
  const ready: DesiredCondition =
    refused || !stored || !view
      ? {
          type: "Ready",
          status: "False",
          reason: refusals[0]?.code ?? "NotStored",
          message: `${summary(refusals) || "not stored"}${stored && view ? `; ${inForce(stored, view)}` : refused ? "; nothing is recorded for this resource, so verify knows no such mandate" : ""}`,
        }
      : stored.revokedAt
        ? { type: "Ready", status: "False", reason: "DELEGATION_REVOKED", message: revokedMessage(stored, "a new mandate is a new resource") }
        : view.effective === "expired"
          ? {
              type: "Ready",
              status: "False",
              reason: "DELEGATION_EXPIRED",
              message: `the mandate's delegation ${stored.delegationId} expired at ${stored.record.expires_at}; a new mandate is a new resource`,
            }
          : {
              type: "Ready",
              status: "True",
              reason: "Reconciled",
              message: `payment mandate recorded as delegation ${stored.delegationId}; effective status ${view.effective}${suspendedNote(view)}`,
            };
  const conditions: DesiredCondition[] = [
    conditionOf("Valid", refusals, {
      reason: "Validated",
      message: "the payment mandate verifies: trusted issuer, every disclosure, key binding to the agent's key",
    }),
    { type: "ChainValid", status: "True", reason: "ChainIntact", message: "a direct grant from the principal (a payment mandate)" },
    conditionOf("Bound", refusals, { reason: "Bound", message: binding.ok ? `namespace ${namespace} is bound to ${binding.orgId}` : "" }),
    storedCondition(obj.metadata.generation, refusals, refused, stored, "the mandate recorded before"),
    ready,
  ];
  await report(
    ctx,
    DELEGATIONS,
    KIND,
    obj,
    {
      // What verify enforces for this resource's record; Invalid only when nothing is recorded.
      phase: view ? phaseOf(view.effective) : refused ? "Invalid" : "Pending",
      effectiveStatus: view?.effective,
      expiresAt: view && Number.isFinite(view.expiresAtMs) && view.expiresAtMs > 0 ? new Date(view.expiresAtMs).toISOString() : undefined,
      chainDepth: 0,
      revokedAt: stored?.revokedAt ? stored.revokedAt.toISOString() : undefined,
    },
    conditions,
  );
  if (refusals.some((r) => r.code === "NAMESPACE_NOT_BOUND")) return { requeueAfterMs: UNBOUND_RETRY_MS };
  if (!refused && view?.nextChangeMs !== undefined) return { requeueAfterMs: requeueAt(view.nextChangeMs, now) };
  return {};
}
