/**
 * The payment-side parties of an agreement: who may record the later outcomes of its allowed
 * actions (`authorized`, `settled`, `failed`) and read it (docs/verify.md, "Who records
 * outcomes").
 *
 * An acknowledgement with role `merchant`, `psp` or `issuer` whose `id` is a registry
 * organization id (`org_…`) CLAIMS that organization as a party. A claim is only a claim: the
 * key it carries is the declaring party's choice, so anyone can sign one. It names the
 * organization only when its key (by RFC 7638 thumbprint) is a live key that organization
 * registered (src/store/ack-parties.ts checks the claims returned here against the registry).
 * The agent's own acknowledgement (role `agent`) claims nobody: the side that spends never
 * releases its own spend. Pure; never throws.
 */
import type { HashString } from "../canonical/index.js";
import { keyId, parsePublicJwk } from "../jose/index.js";
import { isId } from "../registry/index.js";
import { verifyAcknowledgement } from "./acks.js";
import { mandateHash } from "./mandate.js";
import type { AckRole, IntentAgreement } from "./types.js";

/** The acknowledgement roles that make their `id` a payment-side party. */
export const PAYMENT_PARTY_ROLES: ReadonlySet<AckRole> = new Set<AckRole>(["merchant", "psp", "issuer"]);

/** An acknowledgement that claims a registry organization as a payment-side party. */
export interface PartyClaim {
  /** Index of the acknowledgement in `acknowledgements`. */
  index: number;
  role: AckRole;
  /** The organization it names (the ack's `id`). */
  orgId: string;
  /** The RFC 7638 id of the key it carries; undefined when that is no usable public key. */
  thumbprint: HashString | undefined;
  /** It acknowledges a current mandate hash of this agreement. */
  current: boolean;
  /** Its signature verifies with the key it carries. */
  verifies: boolean;
}

type PartySource = Pick<IntentAgreement, "agreement_id" | "mandates" | "acknowledgements">;

/** Every acknowledgement of `agreement` that claims a registry organization (see the module comment). */
export async function partyClaims(agreement: PartySource): Promise<PartyClaim[]> {
  const current = new Set<string>();
  for (const m of Array.isArray(agreement.mandates) ? agreement.mandates : []) {
    try {
      current.add(mandateHash(m));
    } catch {
      // an unhashable mandate has no current hash
    }
  }
  const out: PartyClaim[] = [];
  const acks = Array.isArray(agreement.acknowledgements) ? agreement.acknowledgements : [];
  for (const [index, ack] of acks.entries()) {
    if (typeof ack !== "object" || ack === null || !PAYMENT_PARTY_ROLES.has(ack.role) || !isId("org", ack.id)) continue;
    let thumbprint: HashString | undefined;
    try {
      thumbprint = keyId(parsePublicJwk(ack.public_key));
    } catch {
      thumbprint = undefined;
    }
    out.push({
      index,
      role: ack.role,
      orgId: ack.id,
      thumbprint,
      current: ack.agreement_id === agreement.agreement_id && current.has(ack.mandate_hash),
      verifies: thumbprint !== undefined && (await verifyAcknowledgement(ack)),
    });
  }
  return out;
}

/**
 * The claims that would name a party if their key is registered: a verifying acknowledgement
 * of a current mandate hash of this agreement.
 */
export async function currentPartyClaims(agreement: PartySource): Promise<Array<PartyClaim & { thumbprint: HashString }>> {
  return (await partyClaims(agreement)).filter((c): c is PartyClaim & { thumbprint: HashString } => c.current && c.verifies && c.thumbprint !== undefined);
}
