/**
 * The catalogue of Writ schemas: every top-level schema document, and the names callers use to
 * validate against a document or one of its `$defs` (for example a bare JWS or public JWK at an
 * API edge).
 */
import { acknowledgementSchema } from "./acknowledgement.js";
import { COMMON_REF, commonSchema } from "./common.js";
import { DELEGATION_REF, delegationSchema } from "./delegation.js";
import { eventSchema } from "./event.js";
import { intentAgreementSchema } from "./intent-agreement.js";
import { ledgerEntrySchema } from "./ledger-entry.js";
import { inclusionProofSchema, logEntrySchema, treeHeadSchema } from "./log.js";
import { mandateSchema } from "./mandate.js";
import { revocationSchema } from "./revocation.js";

/** Every top-level schema document, each with its own `$id`. Register all of them together. */
export const SCHEMA_DOCUMENTS = [
  commonSchema,
  eventSchema,
  acknowledgementSchema,
  ledgerEntrySchema,
  revocationSchema,
  mandateSchema,
  intentAgreementSchema,
  delegationSchema,
  logEntrySchema,
  treeHeadSchema,
  inclusionProofSchema,
] as const;

/** Absolute URI (`$id`, or `$id#/$defs/...`) of each named schema. */
export const SCHEMA_URIS = {
  "intent-agreement": intentAgreementSchema.$id,
  mandate: mandateSchema.$id,
  event: eventSchema.$id,
  acknowledgement: acknowledgementSchema.$id,
  "ledger-entry": ledgerEntrySchema.$id,
  revocation: revocationSchema.$id,
  delegation: delegationSchema.$id,
  scope: DELEGATION_REF.scope,
  condition: DELEGATION_REF.condition,
  "chain-link": DELEGATION_REF.chainLink,
  "log-entry": logEntrySchema.$id,
  "tree-head": treeHeadSchema.$id,
  "inclusion-proof": inclusionProofSchema.$id,
  jws: COMMON_REF.jws,
  "public-jwk": COMMON_REF.publicJwk,
  actor: COMMON_REF.actor,
} as const;

/** Name of a schema a value can be validated against. */
export type SchemaName = keyof typeof SCHEMA_URIS;

/** Every schema name. */
export const SCHEMA_NAMES = Object.keys(SCHEMA_URIS) as SchemaName[];

/** Whether a string is a schema name (for callers taking names from configuration). */
export function isSchemaName(name: unknown): name is SchemaName {
  return typeof name === "string" && Object.prototype.hasOwnProperty.call(SCHEMA_URIS, name);
}

const DOCUMENTS_BY_ID = new Map<string, object>(SCHEMA_DOCUMENTS.map((d) => [d.$id, d]));

/**
 * The raw schema object a URI names: a whole document for a bare `$id`, or the `$defs` entry
 * for `$id#/$defs/<name>`. Undefined when nothing matches.
 */
export function resolveSchemaUri(uri: string): object | undefined {
  const [base, fragment] = uri.split("#", 2) as [string, string | undefined];
  const doc = DOCUMENTS_BY_ID.get(base);
  if (doc === undefined || fragment === undefined || fragment === "") return doc;
  if (!fragment.startsWith("/")) return undefined;
  let node: unknown = doc;
  for (const raw of fragment.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof node !== "object" || node === null || !Object.prototype.hasOwnProperty.call(node, key)) {
      return undefined;
    }
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === "object" && node !== null ? node : undefined;
}
