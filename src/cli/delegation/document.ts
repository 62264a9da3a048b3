/**
 * Delegation files as the delegation verbs read and write them: a Delegation manifest
 * (`spec` is the delegation record with `status` as `spec.state`, see core/crd spec-mapping)
 * or, for convenience, a bare delegation record.
 */
import { delegationFromSpec, delegationSpecOf } from "../../core/crd/index.js";
import type { Delegation } from "../../core/delegation/index.js";
import { validate } from "../../core/schemas/index.js";
import { CliError } from "../errors.js";
import { manifestOf, readManifest, type Manifest, type ManifestMetadata } from "../manifest.js";

/** Kind of the delegation resource. */
export const DELEGATION_KIND = "Delegation";

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A delegation file: the record's fields as written, and the manifest metadata when it is a manifest. */
export interface DelegationFile {
  metadata?: ManifestMetadata;
  fields: Record<string, unknown>;
}

/** Reads a parsed document as a Delegation manifest or a bare record (fields unchecked). */
export function delegationFile(doc: unknown, source: string): DelegationFile {
  if (isObj(doc) && "kind" in doc) {
    const { metadata, spec } = readManifest(doc, DELEGATION_KIND, source);
    return { metadata, fields: delegationFromSpec(spec) };
  }
  if (!isObj(doc)) throw new CliError("INPUT_INVALID", `${source} is neither a Delegation manifest nor a delegation record`);
  return { fields: { ...doc } };
}

/** Throws CHECK_FAILED unless `record` validates as a delegation (schema defaults are filled in). */
export function checkDelegation(record: unknown, what: string): Delegation {
  const result = validate<Delegation>("delegation", structuredClone(record));
  if (!result.ok) {
    throw new CliError("CHECK_FAILED", `${what} does not validate against the delegation schema:\n  - ${result.errors.join("\n  - ")}`);
  }
  return result.value;
}

/** The Delegation manifest of a checked record. */
export function delegationManifest(metadata: ManifestMetadata, record: Delegation): Manifest {
  return manifestOf(DELEGATION_KIND, metadata, delegationSpecOf({ ...record }));
}
