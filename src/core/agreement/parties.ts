/**
 * The payment-side parties of an agreement: who may record the later outcomes of its allowed
 * actions (`authorized`, `settled`, `failed`; docs/verify.md, "Who records outcomes").
 *
 * An agreement names a party by an acknowledgement: a countersignature of a CURRENT mandate
 * hash of the agreement, with role `merchant`, `psp` or `issuer`, that verifies with its own
 * `public_key` (./acks.ts). Its `id` is the party's registry organization id (`org_…`). The
 * agent's own acknowledgement (role `agent`) names no party: the side that spends never
 * releases its own spend. Pure; never throws.
 */
import { verifyAcknowledgement } from "./acks.js";
import { mandateHash } from "./mandate.js";
import type { AckRole, IntentAgreement } from "./types.js";

/** The acknowledgement roles that make their `id` a payment-side party. */
export const PAYMENT_PARTY_ROLES: ReadonlySet<AckRole> = new Set<AckRole>(["merchant", "psp", "issuer"]);

/** The ids named as payment-side parties of `agreement` (see the module comment). */
export async function paymentParties(agreement: Pick<IntentAgreement, "agreement_id" | "mandates" | "acknowledgements">): Promise<Set<string>> {
  const current = new Set(agreement.mandates.map((m) => mandateHash(m)));
  const out = new Set<string>();
  for (const ack of agreement.acknowledgements ?? []) {
    if (!PAYMENT_PARTY_ROLES.has(ack.role) || ack.agreement_id !== agreement.agreement_id || !current.has(ack.mandate_hash)) continue;
    if (await verifyAcknowledgement(ack)) out.add(ack.id);
  }
  return out;
}
