/**
 * Writ's Kubernetes custom resources, generated from the core JSON Schemas: the JSON Schema ->
 * structural schema transformation, the three CRDs (Delegation, IntentAgreement,
 * Subscription in writ.dev/v1alpha1) and the mapping between a resource's spec and Writ's
 * record. Pure: no I/O. `hack/crdgen` writes the CRDs to `crds/`; see docs/operator.md.
 */
export { CrdError, type CrdErrorCode } from "./errors.js";
export type { CustomResourceDefinition, Json, PrinterColumn, SchemaNode, StructuralSchema } from "./types.js";
export { toStructural } from "./structural.js";
export { flattenVariants } from "./variants.js";
export {
  DEFAULT_DELEGATION_STATE,
  DELEGATION_REF_FIELD,
  SPEC_STATE_FIELD,
  MANDATE_FIELD,
  WEBHOOK_URL_PATTERN,
  WRIT_CATEGORY,
  WRIT_GROUP,
  WRIT_KINDS,
  WRIT_VERSION,
  type WritKind,
} from "./kinds.js";
export { AGREEMENT_PHASES, DELEGATION_PHASES, SUBSCRIPTION_PHASES, agreementStatusSchema, delegationStatusSchema, subscriptionStatusSchema } from "./status.js";
export { crdFor, writCrds } from "./definition.js";
export { agreementFromSpec, agreementSpecOf, delegationFromSpec, delegationSpecOf } from "./spec-mapping.js";
export { ownerIdentity, type OwnerKind } from "./owner.js";
