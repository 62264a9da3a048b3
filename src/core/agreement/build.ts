/**
 * Builds a new, signed, active agreement from unsigned mandates: each mandate is signed by the
 * principal, and the event log records proposed -> accepted -> activated (by the principal),
 * hash-chained, with an empty ledger synced at `at`. Used by the demo check, seed data, the
 * CLI and tests, so every signed agreement in Writ is made the same way.
 */
import type { Signer } from "../jose/index.js";
import { buildEvent } from "./events.js";
import { mandateHash, signMandate } from "./mandate.js";
import type { AgreementEvent, EventType, IntentAgreement, Mandate, ParentLimits } from "./types.js";

export interface NewAgreement {
  agreement_id: string;
  /** Mandates without signature; `principal.public_key` and `algorithm` are filled in. */
  mandates: Mandate[];
  parent_limits?: ParentLimits;
  /** RFC 3339 time of signing and activation. */
  at: string;
  /** Where the status ends: "accepted" (signed) or "active" (default). */
  status?: "accepted" | "active";
}

/** A signed agreement with its event chain. */
export async function buildSignedAgreement(input: NewAgreement, principal: Signer): Promise<IntentAgreement> {
  const mandates: Mandate[] = [];
  for (const m of input.mandates) mandates.push(await signMandate({ ...m, rendering: m.rendering ?? renderMandate(m) }, principal));
  const first = mandates[0];
  if (!first) throw new TypeError("an agreement needs at least one mandate");
  const actor = { role: "principal" as const, id: first.principal.id };
  const hash = mandateHash(first);
  const types: EventType[] = input.status === "accepted" ? ["proposed", "accepted"] : ["proposed", "accepted", "activated"];
  const events: AgreementEvent[] = [];
  for (const type of types) {
    events.push(
      buildEvent(events.at(-1), {
        event_id: `${input.agreement_id}-${events.length + 1}`,
        type,
        at: input.at,
        actor,
        agreement_id: input.agreement_id,
        mandate_hash: hash,
      }),
    );
  }
  return {
    agreement_id: input.agreement_id,
    status: input.status ?? "active",
    created_at: input.at,
    updated_at: input.at,
    mandates,
    ...(input.parent_limits ? { parent_limits: input.parent_limits } : {}),
    ledger: [],
    ledger_sequence: 0,
    ledger_as_of: input.at,
    events,
  };
}

/** The plain-text rendering shown to the principal when a mandate carries none. */
export function renderMandate(m: Mandate): string {
  const parts = [`${m.principal.id} authorizes agent ${m.agent.agent_id}`];
  if (m.purpose) parts.push(`for: ${m.purpose}`);
  if (m.maximum_amount !== undefined) parts.push(`up to ${m.maximum_amount} ${m.currency} per payment`);
  if (m.cumulative_maximum !== undefined) parts.push(`up to ${m.cumulative_maximum} ${m.currency} in total`);
  if (m.merchants?.length) parts.push(`at ${m.merchants.join(", ")}`);
  if (m.categories?.length) parts.push(`in ${m.categories.join(", ")}`);
  if (m.expires_at) parts.push(`until ${m.expires_at}`);
  return `${parts.join("; ")}.`;
}
