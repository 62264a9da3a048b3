/**
 * The `.status` schemas of Writ's custom resources: what the controller observed and did.
 * Every kind has `conditions` (the standard metav1.Condition shape, one entry per type),
 * `observedGeneration` and `phase`; each kind adds its own fields. Written by the controller
 * through the status subresource only; users never set them.
 */
import { AGREEMENT_STATUSES } from "../agreement/index.js";
import { HASH_PATTERN } from "../canonical/index.js";
import { DELEGATION_STATUSES } from "../delegation/index.js";
import type { StructuralSchema } from "./types.js";

/**
 * Phases of a Delegation: what verify enforces for the resource's stored record (its effective
 * status, also while a later generation is refused); Invalid when refused and nothing is stored,
 * Pending until reconciled, Unknown while Postgres cannot be reached.
 */
export const DELEGATION_PHASES = ["Pending", "Invalid", "Unknown", "Active", "Suspended", "Revoked", "Expired"] as const;
/**
 * Phases of an IntentAgreement: what verify enforces for the stored agreement (Revoked or
 * Expired also when its delegation is); Invalid / Pending when nothing is stored, Unknown while
 * Postgres cannot be reached.
 */
export const AGREEMENT_PHASES = ["Pending", "Invalid", "Unknown", "Proposed", "Clarifying", "Accepted", "Active", "Revoked", "Expired"] as const;
/** Phases of a Subscription. */
export const SUBSCRIPTION_PHASES = ["Pending", "Invalid", "Unknown", "Ready"] as const;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** One metav1.Condition (the shape `kubectl wait --for=condition=Ready` reads). */
const CONDITION: StructuralSchema = {
  type: "object",
  description: "One aspect of the resource's state (metav1.Condition).",
  properties: {
    type: {
      type: "string",
      description: "Condition type, in CamelCase. Ready: the record is stored and enforced as declared (False with the refusal's reason code when it is not).",
      maxLength: 316,
      pattern: "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    },
    status: { type: "string", description: "True, False or Unknown.", enum: ["True", "False", "Unknown"] },
    observedGeneration: {
      type: "integer",
      description: "metadata.generation the condition was set for; older than metadata.generation means out of date.",
      minimum: 0,
      maximum: MAX_SAFE,
    },
    lastTransitionTime: {
      type: "string",
      description: "When the condition last changed status (RFC 3339).",
      format: "date-time",
    },
    reason: {
      type: "string",
      description:
        "Machine-readable reason: a Writ reason code (for example SIGNATURE_INVALID, CHAIN_SCOPE_WIDENED; see docs/reasons.md), or a lifecycle reason in CamelCase (for example Reconciled).",
      minLength: 1,
      maxLength: 1024,
      pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    },
    message: { type: "string", description: "Human-readable detail: what is wrong and what clears it.", maxLength: 32768 },
  },
  required: ["type", "status", "lastTransitionTime", "reason", "message"],
};

function commonStatus(phases: readonly string[], what: string): Record<string, StructuralSchema> {
  return {
    conditions: {
      type: "array",
      description: `Current state of the ${what}, one entry per condition type (at least Ready).`,
      items: CONDITION,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
    },
    observedGeneration: {
      type: "integer",
      description: "metadata.generation of the spec the controller last reconciled.",
      minimum: 0,
      maximum: MAX_SAFE,
    },
    phase: {
      type: "string",
      description: `One-word summary for kubectl get: what evaluators enforce for the stored record (also while a newer generation is refused), Invalid or Pending while nothing is stored, Unknown while Postgres cannot be reached. One of ${phases.join(", ")}.`,
      enum: [...phases],
    },
  };
}

const hash = (description: string): StructuralSchema => ({ type: "string", description, pattern: HASH_PATTERN });

/** `.status` of a Delegation. */
export const delegationStatusSchema: StructuralSchema = {
  type: "object",
  description: "What the controller observed: whether the grant is valid and stored, and its effective status.",
  properties: {
    ...commonStatus(DELEGATION_PHASES, "delegation"),
    effectiveStatus: {
      type: "string",
      description:
        "The status evaluators enforce (active, suspended, revoked or expired): spec.state, then revocations received over HTTP, expiry (of this grant or any chain link) and failing conditions.",
      enum: [...DELEGATION_STATUSES],
    },
    expiresAt: {
      type: "string",
      description: "Effective lapse time: the earliest of spec.expires_at and every delegation_chain link's expires_at.",
      format: "date-time",
    },
    chainDepth: {
      type: "integer",
      description: "Number of links in spec.delegation_chain: 0 for a direct grant from the principal.",
      minimum: 0,
      maximum: MAX_SAFE,
    },
    revokedAt: {
      type: "string",
      description: "When the revocation took effect (spec.state revoked, an HTTP revocation, or deletion of the resource).",
      format: "date-time",
    },
  },
};

/** `.status` of an IntentAgreement. */
export const agreementStatusSchema: StructuralSchema = {
  type: "object",
  description: "What the controller observed: signatures and chains verified, what was stored and logged.",
  properties: {
    ...commonStatus(AGREEMENT_PHASES, "agreement"),
    effectiveStatus: {
      type: "string",
      description: `The agreement status evaluators derive from signatures, windows, revocation and acknowledgements: ${AGREEMENT_STATUSES.join(", ")}.`,
      enum: [...AGREEMENT_STATUSES],
    },
    mandateHashes: {
      type: "array",
      description: "Hash of each mandate in spec.mandates, in order (sha256 of the canonical mandate without signature).",
      items: hash("One mandate hash."),
    },
    ledgerSequence: {
      type: "integer",
      description: "Number of entries in the stored spend ledger (Postgres is the system of record, not spec.ledger).",
      minimum: 0,
      maximum: MAX_SAFE,
    },
    ledgerHead: hash("entry_hash of the last stored ledger entry; absent while nothing is spent."),
    logSequence: {
      type: "integer",
      description: "Sequence of the transparency log entry (kind agreement) that recorded the current mandate hash.",
      minimum: 1,
      maximum: MAX_SAFE,
    },
  },
};

/** `.status` of a Subscription. */
export const subscriptionStatusSchema: StructuralSchema = {
  type: "object",
  description: "What the controller observed: whether the subscription is registered.",
  properties: {
    ...commonStatus(SUBSCRIPTION_PHASES, "subscription"),
    subscriptionId: {
      type: "string",
      description: "The registry's subscription_id (prefix sub_) of this subscription.",
      pattern: "^sub_",
    },
  },
};
