/**
 * Acknowledgements: countersignatures of one mandate hash by a role (agent, merchant, psp,
 * issuer).
 *
 * Promises: an acknowledgement is signed (protected `typ` `svc-ack+jws`) by its own
 * `public_key` over JCS(ack without `signature`). Only a verifying acknowledgement that names
 * the agreement and the mandate's CURRENT hash counts; one for an older hash of the same
 * intent makes the role "outdated", never "current". Who may act for a role (for example the
 * keys a merchant publishes at its `domain`) is checked elsewhere. Verifiers never throw.
 */
import type { HashString } from "../canonical/index.js";
import { signRecord, signedRecordVerifies, unsignedPart, type Signer } from "../jose/index.js";
import type { AckState } from "./prepared.js";
import type { AckRole, Acknowledgement, Mandate } from "./types.js";

/** The protected-header `typ` of an acknowledgement signature. */
export const ACK_TYP = "svc-ack+jws";

const ACK_ROLES: ReadonlySet<string> = new Set<AckRole>(["agent", "merchant", "psp", "issuer"]);

/** What a party states when it acknowledges a mandate hash. */
export interface AckFields {
  agreement_id: string;
  mandate_hash: HashString;
  role: AckRole;
  id: string;
  at: string;
  domain?: string;
}

/** Signs an acknowledgement with `signer`, whose public key becomes the ack's `public_key`. */
export async function signAcknowledgement(fields: AckFields, signer: Signer): Promise<Acknowledgement> {
  const body: Omit<Acknowledgement, "signature"> = {
    svc_ack: 1,
    agreement_id: fields.agreement_id,
    mandate_hash: fields.mandate_hash,
    role: fields.role,
    id: fields.id,
    at: fields.at,
    public_key: signer.publicJwk,
    ...(fields.domain !== undefined ? { domain: fields.domain } : {}),
  };
  const signature = await signRecord(body, signer, ACK_TYP);
  return { ...body, signature };
}

/** True when the acknowledgement is well formed and its signature verifies with its `public_key`. */
export async function verifyAcknowledgement(ack: Acknowledgement): Promise<boolean> {
  try {
    if (ack.svc_ack !== 1 || !ACK_ROLES.has(ack.role)) return false;
    return await signedRecordVerifies(ack.signature, ack.public_key, { typ: ACK_TYP, record: unsignedPart(ack) });
  } catch {
    return false;
  }
}

/**
 * State of each role in `mandate.required_acknowledgements` (each role once, in order):
 * "current" when a verifying ack of that role names `agreementId` and `currentHash`;
 * "outdated" when verifying acks of that role name only hashes in `historyHashes` (earlier
 * versions of this mandate); else "missing".
 */
export async function ackStates(
  mandate: Mandate,
  currentHash: HashString,
  acks: readonly Acknowledgement[],
  historyHashes: readonly HashString[],
  agreementId: string,
): Promise<Array<{ role: AckRole; state: AckState }>> {
  const required = Array.isArray(mandate.required_acknowledgements) ? mandate.required_acknowledgements : [];
  const older = new Set<string>(historyHashes.filter((h) => h !== currentHash));
  const list = Array.isArray(acks) ? acks : [];
  const out: Array<{ role: AckRole; state: AckState }> = [];
  const seen = new Set<string>();
  for (const role of required) {
    if (seen.has(role)) continue;
    seen.add(role);
    let state: AckState = "missing";
    for (const ack of list) {
      if (typeof ack !== "object" || ack === null || ack.role !== role || ack.agreement_id !== agreementId) continue;
      const isCurrent = ack.mandate_hash === currentHash;
      if (!isCurrent && (state === "outdated" || !older.has(ack.mandate_hash))) continue;
      if (!(await verifyAcknowledgement(ack))) continue;
      state = isCurrent ? "current" : "outdated";
      if (isCurrent) break;
    }
    out.push({ role, state });
  }
  return out;
}
