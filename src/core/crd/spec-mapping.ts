/**
 * Between a custom resource's `spec` and Writ's record. The record's own `status` field is
 * `spec.state` on a resource (`.status` is what the controller observed), and an
 * IntentAgreement's spec carries `delegationRef` besides the record. Everything else is the
 * record, field for field, so the controller validates the mapped record with the same JSON
 * Schema the CRD was generated from.
 *
 * These functions only rename; they do not validate (the caller validates the result).
 */
import { DEFAULT_DELEGATION_STATE, DELEGATION_REF_FIELD, SPEC_STATE_FIELD } from "./kinds.js";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function fromSpec(spec: unknown): Obj {
  if (!isObj(spec)) return {};
  const out: Obj = {};
  for (const [k, v] of Object.entries(spec)) {
    if (k === SPEC_STATE_FIELD) out.status = v;
    else if (k !== "status") out[k] = v; // a stray spec.status never overrides spec.state
  }
  return out;
}

function toSpec(record: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(record)) out[k === "status" ? SPEC_STATE_FIELD : k] = v;
  return out;
}

/**
 * The delegation record a Delegation's spec declares: `state` becomes `status` (absent: active,
 * as the CRD defaults it). Not an object: an empty record (which fails validation).
 */
export function delegationFromSpec(spec: unknown): Obj {
  const out = fromSpec(spec);
  if (isObj(spec) && !(SPEC_STATE_FIELD in spec)) out.status = DEFAULT_DELEGATION_STATE;
  return out;
}

/** A Delegation spec declaring `record` (`status` becomes `state`). */
export function delegationSpecOf(record: Obj): Obj {
  return toSpec(record);
}

/**
 * The intent agreement record an IntentAgreement's spec declares and the Delegation it names:
 * `state` becomes `status`, `delegationRef` is taken out.
 */
export function agreementFromSpec(spec: unknown): { record: Obj; delegationName: string | undefined } {
  const ref = isObj(spec) ? spec[DELEGATION_REF_FIELD] : undefined;
  const { [DELEGATION_REF_FIELD]: _ref, ...record } = fromSpec(spec);
  const name = isObj(ref) && typeof ref.name === "string" && ref.name !== "" ? ref.name : undefined;
  return { record, delegationName: name };
}

/** An IntentAgreement spec declaring `record`, bound to the Delegation named `delegationName`. */
export function agreementSpecOf(record: Obj, delegationName: string): Obj {
  return { [DELEGATION_REF_FIELD]: { name: delegationName }, ...toSpec(record) };
}
