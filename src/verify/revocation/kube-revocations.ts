/**
 * What a watched Delegation or IntentAgreement says about revocation, and when that changed.
 * Pure: the data plane's watch (./kube-watch.ts) decides with it what to mark in the
 * revocation index; it never trusts the object beyond that (tenancy is checked by the caller).
 *
 * A resource revokes the record it declares when (first match wins):
 * 1. it is being deleted (`metadata.deletionTimestamp`) and carries the finalizer
 *    `writ.dev/revoke`: the record named by its annotation `writ.dev/record-id` (what the
 *    controller's finalizer revokes; without the annotation nothing was stored, so nothing);
 * 2. `spec.state` is `revoked`: the record `spec.delegation_id` / `spec.agreement_id`, unless the
 *    resource's `writ.dev/record-id` names another id (the controller refuses such a change);
 * 3. `status.phase` is `Revoked` (the controller saw it revoked): the record-id annotation, else
 *    the spec's id.
 * Suspension (`state: suspended`) and expiry are not revocations: the index only holds final
 * states; a suspension takes effect when the controller stores it, expiry at evaluation.
 *
 * When it changed (`changedAtMs`, for `writ_revocation_lag_seconds`): the annotation
 * `writ.dev/revoked-at` (RFC 3339, milliseconds; set by whoever revokes, e.g. the CLI or a
 * GitOps pipeline) when present; else for a deletion its `deletionTimestamp`; else for a status
 * the controller's `status.revokedAt`; else the latest `metadata.managedFields[].time` (the API
 * server's record of the last write). The API server's times have one-second resolution, so
 * they are taken as the middle of their second (`precise: false`).
 */
import type { KubeObject } from "../../sources/kubernetes/index.js";

/** The annotation a revoking client may set to the instant of its revocation (RFC 3339). */
export const REVOKED_AT_ANNOTATION = "writ.dev/revoked-at";
/** The controller's finalizer (src/controller/kinds.ts). */
const REVOKE_FINALIZER = "writ.dev/revoke";
/** The controller's record-id annotation (src/controller/kinds.ts). */
const RECORD_ID_ANNOTATION = "writ.dev/record-id";
/** Longest id accepted from an object. */
const MAX_ID_LENGTH = 256;

/** The two watched kinds. */
export type WatchedKind = "delegation" | "agreement";

/** Why a resource revokes. */
export type RevocationTrigger = "deletion" | "state" | "status";

/** What a resource revokes. */
export interface WatchedRevocation {
  kind: WatchedKind;
  id: string;
  trigger: RevocationTrigger;
  /** Epoch ms of the change, when the object tells (see the module comment). */
  changedAtMs?: number;
  /** False when `changedAtMs` comes from a one-second-resolution time. */
  precise: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function idOf(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 && v.length <= MAX_ID_LENGTH ? v : undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch ms of an RFC 3339 instant, or undefined. */
function instant(v: unknown): number | undefined {
  if (typeof v !== "string" || !RFC3339.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A second-resolution API server time taken as the middle of its second. */
function coarse(v: unknown): number | undefined {
  const ms = instant(v);
  return ms === undefined ? undefined : ms + 500;
}

function latestManagedFieldsTime(obj: KubeObject): number | undefined {
  const fields = obj.metadata.managedFields;
  if (!Array.isArray(fields)) return undefined;
  let latest: number | undefined;
  for (const f of fields) {
    const t = isObj(f) ? instant(f.time) : undefined;
    if (t !== undefined && (latest === undefined || t > latest)) latest = t;
  }
  return latest;
}

/** When the revocation of `obj` (by `trigger`) happened, as well as the object tells. */
function changedAt(obj: KubeObject, trigger: RevocationTrigger): { changedAtMs?: number; precise: boolean } {
  const annotated = instant(obj.metadata.annotations?.[REVOKED_AT_ANNOTATION]);
  if (annotated !== undefined) return { changedAtMs: annotated, precise: true };
  if (trigger === "status") {
    const at = instant(isObj(obj.status) ? obj.status.revokedAt : undefined);
    if (at !== undefined) return { changedAtMs: at, precise: true };
  }
  const t = trigger === "deletion" ? coarse(obj.metadata.deletionTimestamp) : undefined;
  if (t !== undefined) return { changedAtMs: t, precise: false };
  const managed = latestManagedFieldsTime(obj);
  return managed === undefined ? { precise: false } : { changedAtMs: managed + 500, precise: false };
}

/** What `obj` (a Delegation when `kind` is delegation, else an IntentAgreement) revokes, if anything. */
export function revocationOf(kind: WatchedKind, obj: KubeObject): WatchedRevocation | undefined {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const annotated = idOf(obj.metadata.annotations?.[RECORD_ID_ANNOTATION]);
  const declared = idOf(kind === "delegation" ? spec.delegation_id : spec.agreement_id);
  const make = (id: string | undefined, trigger: RevocationTrigger): WatchedRevocation | undefined =>
    id === undefined ? undefined : { kind, id, trigger, ...changedAt(obj, trigger) };
  const deleting = obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(REVOKE_FINALIZER) ? make(annotated, "deletion") : undefined;
  if (deleting) return deleting;
  if (spec.state === "revoked" && (annotated === undefined || annotated === declared)) return make(declared, "state");
  if (isObj(obj.status) && obj.status.phase === "Revoked") return make(annotated ?? declared, "status");
  return undefined;
}
