/**
 * The pure building of the demo records from a checked request: ONE mandate from the intent,
 * signed by the public demo principal into an active agreement (`buildSignedAgreement`, the
 * same path every signed agreement takes), a one-hour delegation of that agreement to the fixed
 * demo agent, and the payment as a `purchase` action of that agent.
 *
 * Intent mapping: `maximum_amount` and `currency` as given; `purpose` and `natural_language`
 * as given (free text, never measured); `category` -> `categories: [category]` (the payment
 * states no category, so intent distance does not measure it); `include_expiry` true ->
 * `expires_at` from `time_limit` (see time-limit.ts), false -> no expiry (the engine then
 * answers OVER_BROAD_INTENT). The payment's `merchant` and `item` are carried on the action;
 * the intent declares neither, so they never block.
 */
import { type IntentAgreement, type Mandate, buildSignedAgreement } from "../agreement/index.js";
import type { Delegation } from "../delegation/index.js";
import type { Action } from "../evaluate/index.js";
import { formatInstant } from "../time/index.js";
import {
  DEMO_ACTION_ID,
  DEMO_AGENT_ID,
  DEMO_AGREEMENT_ID,
  DEMO_DELEGATION_ID,
  DEMO_INTENT_ID,
  DEMO_PRINCIPAL,
  demoAgentSigner,
  demoPrincipalSigner,
} from "./keys.js";
import type { DemoCheckRequest, DemoIntent, DemoPayment } from "./request.js";
import { expiryFor } from "./time-limit.js";

/** Lifetime of the demo delegation: one hour from the check. */
export const DEMO_DELEGATION_LIFETIME_MS = 3600_000;

/** The unsigned demo mandate for `intent` at `nowMs`. */
export function demoMandate(intent: DemoIntent, nowMs: number): Mandate {
  const m: Mandate = {
    intent_id: DEMO_INTENT_ID,
    principal: { ...DEMO_PRINCIPAL },
    agent: { agent_id: DEMO_AGENT_ID, public_key: demoAgentSigner().publicJwk },
    currency: intent.currency,
    maximum_amount: intent.maximum_amount,
  };
  if (intent.purpose !== undefined) m.purpose = intent.purpose;
  if (intent.natural_language !== undefined) m.natural_language = intent.natural_language;
  if (intent.category !== undefined) m.categories = [intent.category];
  if (intent.include_expiry) m.expires_at = expiryFor(intent.time_limit, nowMs);
  return m;
}

/** The demo agreement: the mandate signed by the demo principal, active, synced at `nowMs`. */
export function buildDemoAgreement(intent: DemoIntent, nowMs: number): Promise<IntentAgreement> {
  return buildSignedAgreement(
    { agreement_id: DEMO_AGREEMENT_ID, mandates: [demoMandate(intent, nowMs)], at: formatInstant(nowMs), status: "active" },
    demoPrincipalSigner(),
  );
}

/** The demo delegation: the demo principal (by key) to the demo agent, for the demo intent, one hour. */
export function demoDelegation(intent: DemoIntent, nowMs: number): Delegation {
  return {
    delegation_id: DEMO_DELEGATION_ID,
    principal: { ...DEMO_PRINCIPAL, public_key: demoPrincipalSigner().publicJwk },
    agent: { agent_id: DEMO_AGENT_ID, public_key: demoAgentSigner().publicJwk },
    granted_at: formatInstant(nowMs),
    expires_at: formatInstant(nowMs + DEMO_DELEGATION_LIFETIME_MS),
    purpose: intent.purpose ?? "demo check",
    scope: { currency: intent.currency, intents: [DEMO_INTENT_ID] },
    conditions: [],
    revocable: true,
    delegation_chain: [],
    status: "active",
  };
}

/** The payment as the demo agent's `purchase` action proposed at `nowMs`. */
export function demoAction(payment: DemoPayment, nowMs: number): Action {
  const a: Action = {
    action_id: DEMO_ACTION_ID,
    action_type: "purchase",
    amount: payment.amount,
    currency: payment.currency,
    proposed_at: formatInstant(nowMs),
    agent_id: DEMO_AGENT_ID,
  };
  if (payment.merchant !== undefined) a.merchant = payment.merchant;
  if (payment.item !== undefined) a.item = payment.item;
  return a;
}

/** Everything the check evaluates, built from one request. */
export interface DemoRecords {
  agreement: IntentAgreement;
  delegation: Delegation;
  action: Action;
}

/** Builds the demo records for `req` at `nowMs`. */
export async function buildDemoRecords(req: DemoCheckRequest, nowMs: number): Promise<DemoRecords> {
  return {
    agreement: await buildDemoAgreement(req.intent, nowMs),
    delegation: demoDelegation(req.intent, nowMs),
    action: demoAction(req.payment, nowMs),
  };
}
