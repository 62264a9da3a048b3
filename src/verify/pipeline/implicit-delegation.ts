/**
 * The delegation evaluated for a stored agreement that is bound to no delegation: the signed
 * agreement is itself the principal's grant, so the engine gets a delegation synthesized from
 * it, never stored and never shown. Pure.
 *
 * Rules (docs/verify.md, "Agreements without a delegation"):
 * - `delegation_id` `agreement:<agreement_id>`, status active, revocable; the agreement's own
 *   revocation (record, pushed revocation, index) is what revokes it.
 * - principal: the first mandate's `{type, id}`, with its `public_key` only when every mandate
 *   names that same key (each mandate's signature is verified on its own in any case).
 * - agent: the agent being verified; scope: the first mandate's currency, nothing else (the
 *   intents carry their own ceilings, budgets, verbs and resources); no conditions, no chain.
 * - window: from the earliest `not_before` of the mandates (else the first `accepted` event,
 *   else `created_at`, else the first event, else the epoch) to the latest `expires_at` (an
 *   intent without one is OVER_BROAD_INTENT anyway; the window then ends 9999-12-31).
 * - A window longer than seven days makes a standing grant: the principal's signature is its
 *   HUMAN_APPROVAL (`approved_by` the principal id, at the window start), and the latest
 *   principal signing event (`accepted`, `amended`, `added`) is its re-confirmation. A standing
 *   agreement not re-signed for 30 days therefore steps up with RECONFIRMATION_OVERDUE.
 */
import type { AgreementEvent, IntentAgreement } from "../../core/agreement/index.js";
import type { Delegation } from "../../core/delegation/index.js";
import { keyId, parsePublicJwk } from "../../core/jose/index.js";
import { formatInstant, parseInstant } from "../../core/time/index.js";

/** Window end of an agreement whose intents name no expiry. */
export const OPEN_END = "9999-12-31T23:59:59Z";
/** Prefix of the synthesized delegation's id. */
export const IMPLICIT_DELEGATION_PREFIX = "agreement:";

const SIGNING_EVENTS = new Set(["accepted", "amended", "added"]);

function times(values: readonly unknown[]): number[] {
  return values.map((v) => (typeof v === "string" ? parseInstant(v) : undefined)).filter((n): n is number => n !== undefined);
}

function sameKey(agreement: Pick<IntentAgreement, "mandates">): boolean {
  const ids = new Set<string>();
  for (const m of agreement.mandates) {
    try {
      ids.add(keyId(parsePublicJwk(m.principal?.public_key)));
    } catch {
      return false;
    }
  }
  return ids.size === 1;
}

function windowStart(a: Pick<IntentAgreement, "mandates" | "events" | "created_at">): number {
  const notBefore = times(a.mandates.map((m) => m.not_before));
  if (notBefore.length === a.mandates.length && notBefore.length > 0) return Math.min(...notBefore);
  const events: AgreementEvent[] = Array.isArray(a.events) ? a.events : [];
  const accepted = times(events.filter((e) => e?.type === "accepted").map((e) => e.at));
  if (accepted.length > 0) return Math.min(...accepted);
  const created = times([a.created_at]);
  if (created[0] !== undefined) return created[0];
  return times(events.map((e) => e?.at))[0] ?? 0;
}

/** The delegation evaluated for `agreement` acting through `agentId` (see the module rules). */
export function implicitDelegation(agreement: Pick<IntentAgreement, "agreement_id" | "mandates" | "events" | "created_at">, agentId: string): Delegation {
  const first = agreement.mandates[0];
  const start = windowStart(agreement);
  const ends = agreement.mandates.map((m) => (typeof m.expires_at === "string" ? parseInstant(m.expires_at) : undefined));
  // No mandates (never stored, but hostile input): open-ended, not Math.max() of nothing (-Infinity).
  const open = ends.length === 0 || ends.some((e) => e === undefined);
  const end = open ? OPEN_END : formatInstant(Math.max(...(ends as number[])));
  const principal: Delegation["principal"] = { type: first?.principal?.type ?? "human", id: first?.principal?.id ?? "unknown" };
  if (first?.principal?.public_key && sameKey(agreement)) principal.public_key = first.principal.public_key;
  const events: AgreementEvent[] = Array.isArray(agreement.events) ? agreement.events : [];
  const signed = times(events.filter((e) => SIGNING_EVENTS.has(e?.type)).map((e) => e.at));
  const out: Delegation = {
    delegation_id: `${IMPLICIT_DELEGATION_PREFIX}${agreement.agreement_id}`,
    principal,
    agent: { agent_id: agentId },
    granted_at: formatInstant(start),
    expires_at: end,
    purpose: `the signed agreement ${agreement.agreement_id}`,
    scope: { currency: first?.currency ?? "XXX" },
    conditions: [],
    revocable: true,
    delegation_chain: [],
    status: "active",
    approval: { type: "HUMAN_APPROVAL", approved_by: principal.id, approved_at: formatInstant(start) },
  };
  if (signed.length > 0) out.reconfirmed_at = formatInstant(Math.max(...signed));
  return out;
}
