/**
 * Writ's three custom resource kinds: names, printer columns, and the spec schema each is
 * generated from. `spec` of a Delegation is the delegation schema and `spec` of an
 * IntentAgreement the intent agreement schema (both from `src/core/schemas`, one source), with
 * one rename: the record's own `status` field is `spec.state`, because `.status` of a resource
 * is what the controller observed (see `spec-mapping.ts`). A Subscription's spec is
 * `{agentId, webhookUrl}`.
 */
import { inlinedSchemaFor } from "../schemas/index.js";
import { MAX_WEBHOOK_URL_LENGTH } from "../registry/index.js";
import { agreementStatusSchema, delegationStatusSchema, subscriptionStatusSchema } from "./status.js";
import type { PrinterColumn, SchemaNode, StructuralSchema } from "./types.js";

/** API group of every Writ resource. */
export const WRIT_GROUP = "writ.dev";
/** The one served and stored version. */
export const WRIT_VERSION = "v1alpha1";
/** Category: `kubectl get writ` lists every Writ resource. */
export const WRIT_CATEGORY = "writ";
/** Name of the spec field holding the record's declared `status`. */
export const SPEC_STATE_FIELD = "state";
/** Name of the IntentAgreement spec field naming its Delegation. */
export const DELEGATION_REF_FIELD = "delegationRef";
/** The declared state a Delegation has when spec.state is absent (the CRD default). */
export const DEFAULT_DELEGATION_STATE = "active";
/** Name of the Delegation spec field holding a payment mandate (the mandate form of a Delegation). */
export const MANDATE_FIELD = "mandate";

/** Everything the CRD of one kind is built from. */
export interface WritKind {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  /** What `kubectl explain <kind>` prints. */
  description: string;
  /** JSON Schema of `spec` (converted to a structural schema by the generator). */
  spec: () => SchemaNode;
  /** Adjusts the converted structural `spec` (what JSON Schema conversion cannot express). */
  structuralSpec?: (spec: StructuralSchema) => StructuralSchema;
  status: StructuralSchema;
  columns: PrinterColumn[];
}

const ready: PrinterColumn = {
  name: "Ready",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: "Status of the Ready condition.",
};
const phase: PrinterColumn = { name: "Phase", type: "string", jsonPath: ".status.phase", description: "What evaluators enforce for the stored record." };
const reason: PrinterColumn = {
  name: "Reason",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
  description: "Reason of the Ready condition: a Writ reason code or a lifecycle reason.",
};
const message: PrinterColumn = {
  name: "Message",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].message',
  description: "Message of the Ready condition: what verify answers and why.",
  priority: 1,
};
const age: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
  description: "Time since the resource was created.",
};
const wide = (c: Omit<PrinterColumn, "priority">): PrinterColumn => ({ ...c, priority: 1 });

/** `schema` with property `from` renamed `to`, re-described, optionally defaulted, required or not. */
function renamed(schema: SchemaNode, from: string, to: string, how: { description: string; required: boolean; default?: string }): SchemaNode {
  const props = schema.properties as Record<string, SchemaNode>;
  const source = props[from];
  if (!source) throw new TypeError(`schema has no property ${from}`);
  if (props[to]) throw new TypeError(`schema already has a property ${to}`);
  const field: SchemaNode = { ...source, description: how.description };
  if (how.default !== undefined) field.default = how.default;
  const properties: Record<string, SchemaNode> = {};
  for (const [k, v] of Object.entries(props)) properties[k === from ? to : k] = k === from ? field : v;
  const required = ((schema.required as string[] | undefined) ?? []).flatMap((r) => (r !== from ? [r] : how.required ? [to] : []));
  return { ...schema, properties, required };
}

/** The `mandate` member of a Delegation spec (docs/mandates.md, "As a Kubernetes resource"). */
const mandateSpec: SchemaNode = {
  type: "object",
  description:
    "The mandate form of a Delegation: an AP2 open payment mandate (SD-JWT with a key-binding JWT) that the controller verifies against the trusted issuer keys and records as this grant. With it, spec holds only mandate, agent.agent_id (the registered agent whose key cnf names) and state; every other field comes from the mandate.",
  required: ["sdJwt"],
  properties: {
    sdJwt: { type: "string", minLength: 1, maxLength: 65_536, description: "The presentation: <issuer-jwt>~<disclosures>~<kb-jwt>." },
    audience: {
      type: "string",
      minLength: 1,
      maxLength: 512,
      description: "The aud the key-binding JWT must name (default: the controller's WRIT_MANDATE_AUDIENCE).",
    },
    nonce: { type: "string", minLength: 1, maxLength: 256, description: "The nonce the key-binding JWT must carry (default: any)." },
  },
};

function delegationSpec(): SchemaNode {
  const base = delegationRecordSpec();
  return { ...base, properties: { ...(base.properties as SchemaNode), [MANDATE_FIELD]: mandateSpec } };
}

/**
 * A Delegation spec is either the full record or the mandate form (`mandate` and `agent`):
 * the record's required members become one alternative of an `anyOf`, so the API server still
 * names a missing member of a declared record.
 */
function delegationStructural(spec: StructuralSchema): StructuralSchema {
  const { required = [], ...rest } = spec;
  return { ...rest, anyOf: [{ required }, { required: [MANDATE_FIELD, "agent"] }] };
}

function delegationRecordSpec(): SchemaNode {
  return renamed(inlinedSchemaFor("delegation"), "status", SPEC_STATE_FIELD, {
    description:
      "Declared status of the grant (the delegation record's status field; named state here because .status is what the controller observed): active, suspended, revoked or expired. Default active. A principal withdraws the grant by setting revoked (final) or suspended in Git; status.effectiveStatus shows what evaluators enforce.",
    required: false,
    default: DEFAULT_DELEGATION_STATE,
  });
}

function agreementSpec(): SchemaNode {
  const base = renamed(inlinedSchemaFor("intent-agreement"), "status", SPEC_STATE_FIELD, {
    description:
      "Declared status of the agreement (the record's status field; named state here because .status is what the controller observed): proposed, clarifying, accepted, active, revoked or expired. Advisory: evaluators derive authority from the signatures, the window, the revocation signature and required acknowledgements. accepted, active and expired require every mandate to be signed.",
    required: true,
  });
  const ref: SchemaNode = {
    type: "object",
    description: "The Delegation (a resource in the same namespace) this agreement is bound to.",
    required: ["name"],
    properties: {
      name: {
        type: "string",
        minLength: 1,
        maxLength: 253,
        pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        description: "metadata.name of the Delegation.",
      },
    },
  };
  return {
    ...base,
    properties: { [DELEGATION_REF_FIELD]: ref, ...(base.properties as SchemaNode) },
    required: [DELEGATION_REF_FIELD, ...(base.required as string[])],
  };
}

/** https anywhere, or http on localhost, 127.0.0.0/8 or [::1]; no credentials, no fragment. */
export const WEBHOOK_URL_PATTERN =
  "^(https://[^\\s/?#@]+|http://(localhost|127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}|\\[::1\\])(:[0-9]{1,5})?)([/?][^\\s#]*)?$";

function subscriptionSpec(): SchemaNode {
  return {
    type: "object",
    description: "Signed webhooks about one agent, sent to one URL.",
    required: ["agentId", "webhookUrl"],
    properties: {
      agentId: {
        type: "string",
        minLength: 1,
        description: "agent_id of the registered agent to follow. Alerts: a revocation, a new incident, a trust score drop of 50 points or more.",
      },
      webhookUrl: {
        type: "string",
        minLength: 1,
        maxLength: MAX_WEBHOOK_URL_LENGTH,
        pattern: WEBHOOK_URL_PATTERN,
        description:
          "Where alerts are POSTed, signed with the log signing key (JWS typ svc-bureau-alert+jws). https, or http on localhost only; no credentials, no fragment.",
      },
    },
  };
}

/** The three kinds, in the order their CRDs are written. */
export const WRIT_KINDS: readonly WritKind[] = [
  {
    kind: "Delegation",
    plural: "delegations",
    singular: "delegation",
    shortNames: ["wdel"],
    description:
      "Delegation: an explicit grant of narrow, short-lived authority from a principal to an agent (optionally through a chain of agents). spec is Writ's delegation record, or a payment mandate (spec.mandate) the controller verifies and maps; status is what the controller observed.",
    spec: delegationSpec,
    structuralSpec: delegationStructural,
    status: delegationStatusSchema,
    columns: [
      ready,
      phase,
      reason,
      { name: "Agent", type: "string", jsonPath: ".spec.agent.agent_id", description: "agent_id of the agent holding the grant." },
      { name: "Expires", type: "string", jsonPath: ".spec.expires_at", description: "Declared lapse time (status.expiresAt is the effective one)." },
      age,
      message,
      wide({ name: "Principal", type: "string", jsonPath: ".spec.principal.id", description: "Who granted the authority." }),
      wide({ name: "State", type: "string", jsonPath: ".spec.state", description: "Declared state." }),
      wide({ name: "Depth", type: "integer", jsonPath: ".status.chainDepth", description: "Number of delegation_chain links." }),
      wide({ name: "ID", type: "string", jsonPath: ".spec.delegation_id", description: "delegation_id of the record." }),
    ],
  },
  {
    kind: "IntentAgreement",
    plural: "intentagreements",
    singular: "intentagreement",
    shortNames: ["wia"],
    description:
      "IntentAgreement: a signed intent agreement (mandates signed by the principal, event log, spend ledger replica) bound to a Delegation in the same namespace. spec is Writ's intent agreement record plus delegationRef; status is what the controller observed.",
    spec: agreementSpec,
    status: agreementStatusSchema,
    columns: [
      ready,
      phase,
      reason,
      { name: "Agent", type: "string", jsonPath: ".spec.mandates[0].agent.agent_id", description: "agent_id of the first mandate's agent." },
      { name: "Expires", type: "string", jsonPath: ".spec.mandates[0].expires_at", description: "Lapse time of the first mandate." },
      age,
      message,
      wide({ name: "Delegation", type: "string", jsonPath: ".spec.delegationRef.name", description: "The bound Delegation." }),
      wide({ name: "Principal", type: "string", jsonPath: ".spec.mandates[0].principal.id", description: "The signing principal." }),
      wide({ name: "Ledger", type: "integer", jsonPath: ".status.ledgerSequence", description: "Stored ledger entries." }),
      wide({ name: "ID", type: "string", jsonPath: ".spec.agreement_id", description: "agreement_id of the record." }),
    ],
  },
  {
    kind: "Subscription",
    plural: "subscriptions",
    singular: "subscription",
    shortNames: ["wsub"],
    description: "Subscription: signed webhooks (revocation, new incident, trust score drop) about one registered agent, sent to one URL.",
    spec: subscriptionSpec,
    status: subscriptionStatusSchema,
    columns: [
      ready,
      phase,
      reason,
      { name: "Agent", type: "string", jsonPath: ".spec.agentId", description: "The followed agent." },
      age,
      message,
      wide({ name: "URL", type: "string", jsonPath: ".spec.webhookUrl", description: "Where alerts are sent." }),
      wide({ name: "ID", type: "string", jsonPath: ".status.subscriptionId", description: "The registry's subscription_id." }),
    ],
  },
];
