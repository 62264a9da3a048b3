/**
 * Admission review of Writ resources: what the API server must refuse before it stores a
 * declaration, with messages a person understands. Pure apart from the optional `lookup`.
 *
 * It runs the reconcilers' own checks (`checkDelegationSpec`, `checkMandateSpec` for a
 * Delegation in the mandate form, `checkAgreementSpec`, `checkSubscriptionSpec`), so admission and reconcile agree on what is valid: schema and
 * cross-field rules (`expires_at` after `granted_at`, conditions, scope), chains that break or
 * widen, signatures, event and ledger chains, private key material. On UPDATE it also refuses
 * a changed `delegation_id` / `agreement_id` (a new grant is a new resource) and, when the
 * previous generation was stored, a silent extension of it (`silentExtension`; a revoked grant
 * never comes back).
 *
 * The record-id annotation `writ.dev/record-id` is Writ's: once a resource carries it, no UPDATE
 * may change or remove it (also on an object being deleted, and when the spec is unchanged), and
 * a new Subscription may not carry it (the controller tracks subscriptions by the resource's
 * uid). The controller never trusts it anyway: it acts only on the records a resource owns
 * (src/controller/reconcilers/ownership.ts); refusing the change keeps the resource's own view
 * honest and stops a deletion from even naming another record.
 *
 * What depends on the cluster or the database (the namespace's organization, whether the
 * Delegation an agreement names is stored, a record stored by another tenant) is left to the
 * controller, which reports it in `.status`. Allowed without checks: DELETE, an object being
 * deleted, and an UPDATE that leaves `spec` as it was (metadata: finalizers, labels,
 * annotations), so objects stored before the webhook existed can still be labelled and deleted.
 *
 * Phases: `validate` (ValidatingWebhookConfiguration: everything above) and `screen`
 * (MutatingWebhookConfiguration, which the API server calls BEFORE its schema check: only the
 * private key members, whose schema rule can only say "must not validate the schema (not)").
 * On CREATE the screen also defaults what the controller would otherwise add with a patch of
 * its own once the object exists (`defaultsPatch`): the finalizer `writ.dev/revoke` and, for a
 * Delegation or IntentAgreement, the record-id annotation naming `spec.delegation_id` /
 * `spec.agreement_id` (a payment mandate's derived id for the mandate form). One write per resource saved; from its creation the resource cannot go
 * without its record being revoked.
 */
import { canonicalJson } from "../../core/canonical/index.js";
import { delegationFromSpec } from "../../core/crd/index.js";
import { silentExtension, type Delegation } from "../../core/delegation/index.js";
import { validate } from "../../core/schemas/index.js";
import { findCondition } from "../conditions.js";
import { RECORD_ID_ANNOTATION, REVOKE_FINALIZER, WRIT_API_VERSION, type WritResource } from "../kinds.js";
import { storedRecordId } from "../resource-writes.js";
import { privateKeyRefusals, type Refusal } from "../spec-errors.js";
import { checkAgreementSpec } from "../reconcilers/agreement-checks.js";
import { checkDelegationSpec } from "../reconcilers/delegation-checks.js";
import { checkMandateSpec, isMandateSpec, mandateImmutable } from "../reconcilers/delegation-mandate.js";
import { checkSubscriptionSpec } from "../reconcilers/subscription.js";

/** The members of an admission.k8s.io/v1 AdmissionRequest that are read. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: string;
  namespace?: string;
  name?: string;
  object?: unknown;
  oldObject?: unknown;
}

/** One JSON Patch operation (RFC 6902) of a mutating answer. */
export interface PatchOp {
  op: "add";
  path: string;
  value: unknown;
}

/** The answer: allowed, or refused with a message; warnings either way; a patch (screen phase, CREATE). */
export interface AdmissionVerdict {
  allowed: boolean;
  message?: string;
  warnings?: string[];
  patch?: PatchOp[];
}

/** Which webhook asks (see the module comment). */
export type AdmissionPhase = "validate" | "screen";

/** What a record id's revocation looks like to a warning. */
export interface RevokedRecord {
  revokedAt: Date;
  reason: string | null;
}

/**
 * Optional reads for warnings (never a refusal): the revocation of a record id already stored
 * for the organization `namespace` is bound to (never another tenant's).
 */
export interface AdmissionLookup {
  revoked(kind: "delegation" | "agreement", id: string, namespace: string): Promise<RevokedRecord | undefined>;
}

/** Refusals listed in one message at most. */
const MAX_LISTED = 8;
/** Longest message (the API server prefixes its own words). */
const MAX_MESSAGE = 4000;

const asResource = (v: unknown): WritResource | undefined =>
  typeof v === "object" && v !== null && typeof (v as { metadata?: unknown }).metadata === "object" ? (v as WritResource) : undefined;

function sameSpec(a: WritResource, b: WritResource): boolean {
  try {
    return canonicalJson(a.spec ?? null) === canonicalJson(b.spec ?? null);
  } catch {
    return false;
  }
}

const idOf = (obj: WritResource | undefined, field: "delegation_id" | "agreement_id"): string | undefined => {
  const v = (obj?.spec as Record<string, unknown> | undefined)?.[field];
  return typeof v === "string" && v !== "" ? v : undefined;
};

/** Refusals of changing the record id an existing resource declared. */
function immutableId(obj: WritResource, old: WritResource | undefined, field: "delegation_id" | "agreement_id", noun: string): Refusal[] {
  const now = idOf(obj, field);
  if (now === undefined) return [];
  const before = storedRecordId(obj) ?? idOf(old, field);
  if (before === undefined || before === now) return [];
  return [
    {
      condition: "Valid",
      code: "SPEC_INVALID",
      message: `spec.${field} is immutable: this resource declared ${before}; a new ${noun} (${now}) is a new resource with its own name`,
    },
  ];
}

/** True when `old` was stored as its current generation (its status says so). */
function storedAsIs(old: WritResource): boolean {
  const stored = findCondition(old.status, "Stored");
  return stored?.status === "True" && old.status?.observedGeneration === old.metadata.generation;
}

/**
 * A Delegation in the mandate form: its shape and a presentation that decodes; the mandate it
 * records stays the one this resource recorded first. Its signatures need the registered issuer
 * keys, so the controller checks them (and reports them in `.status`).
 */
async function mandateRefusals(obj: WritResource, old: WritResource | undefined): Promise<Refusal[]> {
  const declared = storedRecordId(obj);
  const check = await checkMandateSpec(obj.spec, declared);
  const before = declared ?? (old && isMandateSpec(old.spec) ? (await checkMandateSpec(old.spec)).recordId : undefined);
  return [...check.refusals, ...mandateImmutable(before, check.recordId)];
}

async function delegationRefusals(obj: WritResource, old: WritResource | undefined, now: number): Promise<Refusal[]> {
  if (isMandateSpec(obj.spec)) return mandateRefusals(obj, old);
  const check = await checkDelegationSpec(obj.spec, now);
  const out = [...check.refusals, ...immutableId(obj, old, "delegation_id", "grant")];
  if (old && check.record && storedAsIs(old) && out.length === 0) {
    const before = validate<Delegation>("delegation", delegationFromSpec(old.spec));
    const why = before.ok ? silentExtension(before.value, check.record) : undefined;
    if (why !== undefined) out.push({ condition: "Valid", code: "SPEC_INVALID", message: `refused as a silent extension of the stored grant: ${why}` });
  }
  return out;
}

async function agreementRefusals(obj: WritResource, old: WritResource | undefined, now: number): Promise<Refusal[]> {
  const check = await checkAgreementSpec(obj.spec, now);
  return [...check.refusals, ...immutableId(obj, old, "agreement_id", "agreement")];
}

/** The refusal message: the object, then each reason code with what is wrong. */
function messageOf(kind: string, obj: WritResource, refusals: readonly Refusal[]): string {
  const where = `${kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name ?? obj.metadata.generateName ?? ""}`;
  const listed = refusals.slice(0, MAX_LISTED).map((r) => `${r.code}: ${r.message}`);
  const more = refusals.length > MAX_LISTED ? ` (and ${refusals.length - MAX_LISTED} more)` : "";
  const text = `${where} is refused: ${listed.join("; ")}${more}`;
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text;
}

/** A warning when a new resource declares a record id that is already revoked (revocation is final). */
async function revokedWarning(kind: string, obj: WritResource, lookup: AdmissionLookup | undefined): Promise<string[]> {
  if (!lookup) return [];
  const field = kind === "Delegation" ? "delegation_id" : kind === "IntentAgreement" ? "agreement_id" : undefined;
  if (!field) return [];
  const id = idOf(obj, field);
  if (id === undefined) return [];
  const r = await lookup.revoked(field === "delegation_id" ? "delegation" : "agreement", id, obj.metadata.namespace ?? "").catch(() => undefined);
  if (!r) return [];
  return [
    `spec.${field} ${id} was revoked at ${r.revokedAt.toISOString()}${r.reason ? ` (${r.reason})` : ""}; revocation is final, so this resource will stay revoked: a new grant needs a new ${field}`,
  ];
}

/** JSON pointer escaping of one token. */
const pointer = (token: string) => token.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * The patch that adds the finalizer and (Delegation, IntentAgreement) the record-id annotation
 * to a new resource, when they are not there yet; empty when nothing is missing. A Delegation in
 * the mandate form records as the id derived from its mandate (`mandateRecordId`).
 */
export function defaultsPatch(kind: string, obj: WritResource, mandateRecordId?: string): PatchOp[] {
  const ops: PatchOp[] = [];
  const finalizers = obj.metadata.finalizers;
  if (!finalizers) ops.push({ op: "add", path: "/metadata/finalizers", value: [REVOKE_FINALIZER] });
  else if (!finalizers.includes(REVOKE_FINALIZER)) ops.push({ op: "add", path: "/metadata/finalizers/-", value: REVOKE_FINALIZER });
  const field = kind === "Delegation" ? "delegation_id" : kind === "IntentAgreement" ? "agreement_id" : undefined;
  const id = mandateRecordId ?? (field ? idOf(obj, field) : undefined);
  if (id !== undefined && storedRecordId(obj) === undefined) {
    const annotations = obj.metadata.annotations;
    if (!annotations) ops.push({ op: "add", path: "/metadata/annotations", value: { [RECORD_ID_ANNOTATION]: id } });
    else ops.push({ op: "add", path: `/metadata/annotations/${pointer(RECORD_ID_ANNOTATION)}`, value: id });
  }
  return ops;
}

/** The refusal message of a request that writes the record-id annotation, or undefined. */
export function recordIdChange(kind: string, op: string, obj: WritResource, old: WritResource | undefined): string | undefined {
  const now = obj.metadata.annotations?.[RECORD_ID_ANNOTATION];
  const where = `${kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name ?? ""}`;
  if (op === "UPDATE" && old) {
    const before = old.metadata.annotations?.[RECORD_ID_ANNOTATION];
    if (before !== undefined && now !== before) {
      return `${where} is refused: the annotation ${RECORD_ID_ANNOTATION} names the record this resource stored (${String(before)}) and cannot be ${now === undefined ? "removed" : `changed (to ${String(now)})`}; a new record is a new resource`;
    }
  }
  if (op === "CREATE" && kind === "Subscription" && now !== undefined) {
    return `${where} is refused: the annotation ${RECORD_ID_ANNOTATION} is written by Writ, not declared`;
  }
  return undefined;
}

/** Reviews one request (see the module comment). */
export async function reviewAdmission(
  req: AdmissionRequest,
  opts: { now: number; phase: AdmissionPhase; lookup?: AdmissionLookup },
): Promise<AdmissionVerdict> {
  if (`${req.kind.group}/${req.kind.version}` !== WRIT_API_VERSION) return { allowed: true };
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return { allowed: true };
  const obj = asResource(req.object);
  if (!obj) return { allowed: false, message: "the request carries no object" };
  const old = req.operation === "UPDATE" ? asResource(req.oldObject) : undefined;
  const repointed = recordIdChange(req.kind.kind, req.operation, obj, old);
  if (repointed !== undefined) return { allowed: false, message: repointed };
  if (obj.metadata.deletionTimestamp) return { allowed: true };
  if (old && sameSpec(obj, old)) return { allowed: true };

  const kind = req.kind.kind;
  let refusals: Refusal[];
  if (opts.phase === "screen") refusals = privateKeyRefusals(obj.spec);
  else if (kind === "Delegation") refusals = await delegationRefusals(obj, old, opts.now);
  else if (kind === "IntentAgreement") refusals = await agreementRefusals(obj, old, opts.now);
  else if (kind === "Subscription") refusals = checkSubscriptionSpec(obj.spec).refusals;
  else return { allowed: true };
  if (refusals.length > 0) return { allowed: false, message: messageOf(kind, obj, refusals) };
  if (opts.phase === "screen") {
    const mandateId = kind === "Delegation" && isMandateSpec(obj.spec) ? (await checkMandateSpec(obj.spec)).recordId : undefined;
    const patch = req.operation === "CREATE" ? defaultsPatch(kind, obj, mandateId) : [];
    return patch.length > 0 ? { allowed: true, patch } : { allowed: true };
  }
  const warnings = req.operation === "CREATE" ? await revokedWarning(kind, obj, opts.lookup) : [];
  return warnings.length > 0 ? { allowed: true, warnings } : { allowed: true };
}
