/**
 * The sample resources (`writ samples`, `writ dev`, and the reference copies in
 * `config/samples/`), built with the core (so the signatures are real):
 * Acme Corp (a business principal, org_acme) delegates office-supply and travel purchases to
 * agent_procurement; agent_procurement re-delegates a narrower travel-only grant to
 * agent_travel (a one-link delegation_chain); Acme signs a two-intent agreement bound to the
 * first delegation; and a Subscription follows agent_procurement.
 *
 * Every time is derived from one instant `at`, so the samples are reproducible (Ed25519
 * signatures are deterministic) and can be re-dated with `--at`. Fresh samples (`dated: true`)
 * carry `at` in their record ids and resource names (`del_acme_procurement_20261124t090000z`,
 * `acme-procurement-20261124t090000z`), so a later rendering never collides with what an earlier
 * one stored (records are history: a revoked or expired grant keeps its id for good).
 */
import { buildSignedAgreement, type IntentAgreement, type Mandate } from "../agreement/index.js";
import { agreementSpecOf, delegationSpecOf, WRIT_GROUP, WRIT_VERSION } from "../crd/index.js";
import type { ChainLink, Condition, Delegation, Scope } from "../delegation/index.js";
import { parseInstant } from "../time/index.js";
import { sampleSigner } from "./keys.js";

/** The instant the committed samples are dated from. */
export const SAMPLE_AT = "2026-11-20T09:00:00Z";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** A custom resource manifest. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
}

/** One sample file: its name under config/samples/, what it shows, and the manifest. */
export interface Sample {
  file: string;
  about: string;
  manifest: Manifest;
}

/** Names of the sample resources (metadata.name) in the reference copies. */
export const SAMPLE_NAMES = {
  delegation: "acme-procurement",
  chainedDelegation: "acme-procurement-travel",
  agreement: "acme-procurement-agreement",
  subscription: "acme-procurement-alerts",
} as const;

/** The suffix of fresh samples dated `at`: its UTC time to the second, e.g. `20261124t090000z`. */
export function sampleSuffix(at: string): string {
  const t = parseInstant(at);
  if (t === undefined) throw new TypeError(`not an RFC 3339 time: ${at}`);
  return new Date(t)
    .toISOString()
    .replace(/\.\d+Z$/, "z")
    .replace(/[-:]/g, "")
    .toLowerCase();
}

/** The resource names of samples with `suffix` (none: the reference names). */
export function sampleNames(suffix?: string): { -readonly [K in keyof typeof SAMPLE_NAMES]: string } {
  const out: { -readonly [K in keyof typeof SAMPLE_NAMES]: string } = { ...SAMPLE_NAMES };
  if (suffix !== undefined) for (const k of Object.keys(out) as (keyof typeof SAMPLE_NAMES)[]) out[k] = `${out[k]}-${suffix}`;
  return out;
}

/** Options of `buildSamples`. */
export interface SampleOptions {
  /** Carry `at` in every record id and resource name (see the module comment). */
  dated?: boolean;
  /** Where the sample Subscription delivers (default SAMPLE_WEBHOOK_URL). */
  webhookUrl?: string;
}

/** Where the sample Subscription delivers unless told: the webhook receiver `writ dev` runs on this machine. */
export const SAMPLE_WEBHOOK_URL = "http://127.0.0.1:8089/writ/alerts";

function manifest(kind: string, name: string, spec: Record<string, unknown>): Manifest {
  return {
    apiVersion: `${WRIT_GROUP}/${WRIT_VERSION}`,
    kind,
    metadata: { name, labels: { "app.kubernetes.io/part-of": "writ-samples" } },
    spec,
  };
}

/** The sample resources dated from `at` (RFC 3339). */
export async function buildSamples(at: string = SAMPLE_AT, opts: SampleOptions = {}): Promise<Sample[]> {
  const t0 = parseInstant(at);
  if (t0 === undefined) throw new TypeError(`not an RFC 3339 time: ${at}`);
  const suffix = opts.dated ? sampleSuffix(at) : undefined;
  const id = (base: string) => (suffix === undefined ? base : `${base}_${suffix}`);
  const names = sampleNames(suffix);
  const time = (offsetMs: number) => new Date(t0 + offsetMs).toISOString().replace(/\.000Z$/, "Z");
  const principal = sampleSigner("principal");
  const procurement = sampleSigner("procurementAgent");
  const travel = sampleSigner("travelAgent");
  const acme = { type: "business" as const, id: "org_acme" };

  const rootScope: Scope = {
    intents: ["int_office_supplies", "int_travel"],
    currency: "EUR",
    maximum_amount: 500,
    cumulative_maximum: 2000,
    action_types: ["purchase", "refund"],
    categories: ["office_supplies", "travel"],
  };
  // No time condition: the samples hold whenever they are applied while their grants last (a
  // time_window or business_hours_only grant outside its hours is Suspended, its status says why).
  const rootConditions: Condition[] = [{ type: "max_risk_score", value: 70 }];
  const root: Delegation = {
    delegation_id: id("del_acme_procurement"),
    principal: { ...acme, public_key: principal.publicJwk },
    agent: { agent_id: "agent_procurement", public_key: procurement.publicJwk },
    granted_at: time(0),
    expires_at: time(7 * DAY),
    purpose: "Buy office supplies and book business travel for Acme Corp.",
    scope: rootScope,
    conditions: rootConditions,
    revocable: true,
    delegation_chain: [],
    status: "active",
  };

  const link: ChainLink = {
    delegation_id: root.delegation_id,
    delegator: acme,
    delegate: { agent_id: root.agent.agent_id },
    delegated_at: root.granted_at,
    expires_at: root.expires_at,
    scope: rootScope,
    conditions: rootConditions,
  };
  const chained: Delegation = {
    delegation_id: id("del_acme_procurement_travel"),
    principal: { ...acme, public_key: principal.publicJwk },
    agent: { agent_id: "agent_travel", public_key: travel.publicJwk },
    granted_at: time(HOUR),
    expires_at: time(4 * DAY),
    purpose: "Book rail and hotel for the Berlin offsite (re-delegated by agent_procurement).",
    scope: {
      intents: ["int_travel"],
      currency: "EUR",
      maximum_amount: 300,
      cumulative_maximum: 800,
      action_types: ["purchase"],
      merchants: ["db-bahn", "hotel-adlon"],
      categories: ["travel"],
    },
    conditions: [{ type: "max_risk_score", value: 50 }],
    revocable: true,
    delegation_chain: [link],
    status: "active",
  };

  const mandate = ({ intent_id, ...rest }: Omit<Mandate, "principal" | "agent" | "currency">): Mandate => ({
    intent_id,
    principal: acme,
    agent: { agent_id: root.agent.agent_id, public_key: procurement.publicJwk },
    currency: "EUR",
    ...rest,
  });
  const agreement: IntentAgreement = await buildSignedAgreement(
    {
      agreement_id: id("agr_acme_procurement"),
      at: time(0),
      parent_limits: { currency: "EUR", maximum_amount: 500, cumulative_maximum: 2000 },
      mandates: [
        mandate({
          intent_id: "int_office_supplies",
          purpose: "Office supplies for the Berlin office",
          maximum_amount: 250,
          cumulative_maximum: 1000,
          categories: ["office_supplies"],
          action_types: ["purchase", "refund"],
          expires_at: root.expires_at,
        }),
        mandate({
          intent_id: "int_travel",
          purpose: "Rail and hotel for the Berlin offsite",
          maximum_amount: 500,
          cumulative_maximum: 1000,
          categories: ["travel"],
          action_types: ["purchase"],
          expires_at: root.expires_at,
        }),
      ],
    },
    principal,
  );

  return [
    {
      file: "writ.dev_v1alpha1_delegation.yaml",
      about: "Acme Corp (business principal org_acme) grants agent_procurement office-supply and travel purchases for 7 days.",
      manifest: manifest("Delegation", names.delegation, delegationSpecOf({ ...root })),
    },
    {
      file: "writ.dev_v1alpha1_delegation_chained.yaml",
      about: "agent_procurement re-delegates a narrower, travel-only grant to agent_travel (a one-link delegation_chain).",
      manifest: manifest("Delegation", names.chainedDelegation, delegationSpecOf({ ...chained })),
    },
    {
      file: "writ.dev_v1alpha1_intentagreement.yaml",
      about: `Acme's signed two-intent agreement (office supplies, travel), bound to the Delegation ${names.delegation}.`,
      manifest: manifest("IntentAgreement", names.agreement, agreementSpecOf({ ...agreement }, names.delegation)),
    },
    {
      file: "writ.dev_v1alpha1_subscription.yaml",
      about: "Signed webhooks about agent_procurement (revocation, new incident, trust score drop).",
      manifest: manifest("Subscription", names.subscription, {
        agentId: root.agent.agent_id,
        webhookUrl: opts.webhookUrl ?? SAMPLE_WEBHOOK_URL,
      }),
    },
  ];
}
