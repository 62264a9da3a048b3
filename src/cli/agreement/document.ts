/**
 * An IntentAgreement manifest as the agreement verbs read and write it: the metadata kept for
 * Git, the intent agreement record (`spec` minus `delegationRef`, `spec.state` as the record's
 * `status`, see core/crd spec-mapping) and the Delegation it is bound to.
 *
 * Promises: a record read from a manifest, or about to be printed, validates against the intent
 * agreement schema, has an intact event chain and stays inside its parent_limits; otherwise
 * the verb fails (exit 1) with every schema problem listed.
 */
import { parentLimitsProblem, verifyEventChain, type IntentAgreement } from "../../core/agreement/index.js";
import { agreementFromSpec, agreementSpecOf } from "../../core/crd/index.js";
import { validate } from "../../core/schemas/index.js";
import { CliError } from "../errors.js";
import { readDocument } from "../files.js";
import { manifestOf, readManifest, type Manifest, type ManifestMetadata } from "../manifest.js";

/** Kind of the agreement resource. */
export const AGREEMENT_KIND = "IntentAgreement";

/** A read IntentAgreement manifest. */
export interface AgreementDocument {
  metadata: ManifestMetadata;
  record: IntentAgreement;
  delegationName: string;
}

/** Throws CHECK_FAILED unless `record` is a valid, coherent intent agreement. */
export function checkAgreement(record: unknown, what: string): IntentAgreement {
  const result = validate<IntentAgreement>("intent-agreement", record);
  if (!result.ok) {
    throw new CliError("CHECK_FAILED", `${what} does not validate against the intent agreement schema:\n  - ${result.errors.join("\n  - ")}`);
  }
  const chain = verifyEventChain(result.value.events, result.value.agreement_id);
  if (chain !== undefined) throw new CliError("CHECK_FAILED", `${what}: ${chain}`);
  const limits = parentLimitsProblem(result.value);
  if (limits !== undefined) throw new CliError("CHECK_FAILED", `${what}: ${limits}`);
  return result.value;
}

/** Reads and checks an IntentAgreement manifest file. */
export function readAgreementDocument(path: string): AgreementDocument {
  const { metadata, spec } = readManifest(readDocument(path, "--in"), AGREEMENT_KIND, path);
  const { record, delegationName } = agreementFromSpec(spec);
  if (delegationName === undefined) throw new CliError("INPUT_INVALID", `${path} has no spec.delegationRef.name`);
  return { metadata, record: checkAgreement(record, `the agreement in ${path}`), delegationName };
}

/** The manifest of a checked agreement document. */
export function agreementManifest(doc: AgreementDocument): Manifest {
  const record = checkAgreement(doc.record, "the resulting agreement");
  return manifestOf(AGREEMENT_KIND, doc.metadata, agreementSpecOf({ ...record }, doc.delegationName));
}

/** A fresh event id `<agreement_id>-<n>` not yet used in the log. */
export function nextEventId(record: IntentAgreement): string {
  const used = new Set(record.events.map((e) => e.event_id));
  let n = record.events.length + 1;
  while (used.has(`${record.agreement_id}-${n}`)) n++;
  return `${record.agreement_id}-${n}`;
}

/** The principal id the agreement's first mandate names (the actor of principal events). */
export function principalId(record: IntentAgreement): string {
  const id = record.mandates[0]?.principal.id;
  if (id === undefined) throw new CliError("INPUT_INVALID", "the agreement holds no mandate");
  return id;
}
