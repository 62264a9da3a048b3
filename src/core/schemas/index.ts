/**
 * Writ's JSON Schemas (draft 2020-12): the single source of validation for agreements,
 * delegations, their parts and the transparency log's wire records, and the source the CRDs
 * and API route schemas are generated from.
 */
export { SchemaError, type SchemaErrorCode } from "./errors.js";
export { validate, assertValid, schemaFor, validatorForSchema, type ValidationResult } from "./validator.js";
export { inlinedSchemaFor } from "./inline.js";
export { SCHEMA_DOCUMENTS, SCHEMA_NAMES, SCHEMA_URIS, isSchemaName, type SchemaName } from "./registry.js";
export { COMMON_ID, COMMON_REF, SCHEMA_BASE, commonSchema } from "./common.js";
export { NO_NUL_PATTERN, textSchema, type TextBounds } from "./text.js";
export { hasNul } from "../canonical/index.js";
export { EVENT_ID, eventSchema } from "./event.js";
export { ACKNOWLEDGEMENT_ID, acknowledgementSchema } from "./acknowledgement.js";
export { LEDGER_ENTRY_ID, ledgerEntrySchema } from "./ledger-entry.js";
export { REVOCATION_ID, revocationSchema } from "./revocation.js";
export { MANDATE_ID, mandateSchema } from "./mandate.js";
export { INTENT_AGREEMENT_ID, SIGNED_STATUSES, intentAgreementSchema } from "./intent-agreement.js";
export { DELEGATION_ID, DELEGATION_REF, delegationSchema } from "./delegation.js";
export { INCLUSION_PROOF_ID, LOG_ENTRY_ID, LOG_ENTRY_KINDS, TREE_HEAD_ID, inclusionProofSchema, logEntrySchema, treeHeadSchema } from "./log.js";
