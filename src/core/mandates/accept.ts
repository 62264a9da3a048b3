/**
 * A presented AP2 open payment mandate, end to end and pure: the SD-JWT verified
 * (./sd-jwt.ts), then its disclosed claims imported as a delegation (./ap2.ts) for the
 * registered agent, whose key `cnf` must be. Every refusal carries one stable code.
 *
 * The delegation's id is derived from what the issuer signed (`ap2-` + the first 32 hex digits
 * of `mandateHash`, the SHA-256 of the issuer JWT's signing input), never from the signature's
 * text, so presenting the same mandate again (another key-binding JWT, another nonce, another
 * valid signature over the same content) names the same grant and can never create a second
 * budget. The user's confirmation on
 * the trusted surface is the grant's HUMAN_APPROVAL (at `iat`, else at the grant's start),
 * which a mandate living longer than seven days (a standing grant) needs.
 */
import type { PrincipalType } from "../agreement/index.js";
import type { HashString } from "../canonical/index.js";
import type { Delegation } from "../delegation/index.js";
import type { PublicJwk } from "../jose/index.js";
import { Ap2ImportError, type Ap2ImportErrorCode } from "./ap2-errors.js";
import { importOpenPaymentMandate } from "./ap2.js";
import { verifyMandatePresentation, type MandateVerification, type MandateVerifyOptions } from "./sd-jwt.js";
import type { MandateProblemCode } from "./sd-jwt-problems.js";

/** Why a mandate is refused: a verification problem or an import refusal. */
export type MandateRefusalCode = MandateProblemCode | Ap2ImportErrorCode;

/** One refusal reason. */
export interface MandateRefusal {
  code: MandateRefusalCode;
  message: string;
}

/** The registered agent a mandate is recorded for. */
export interface MandateAgent {
  agentId: string;
  publicKey: PublicJwk;
  /** The principal the registry knows for the agent (the user). */
  principal: { type: PrincipalType; id: string };
}

/** The outcome of `acceptOpenPaymentMandate`. */
export type MandateAcceptance =
  | { ok: true; delegation: Delegation; verification: MandateVerification & { issuer: NonNullable<MandateVerification["issuer"]> } }
  | { ok: false; refusals: MandateRefusal[]; verification: MandateVerification };

/** Prefix of the delegation ids of recorded mandates. */
export const MANDATE_DELEGATION_PREFIX = "ap2-";

/** The delegation id of the mandate whose identity (`DecodedMandate.mandateHash`) is `mandateHash`. */
export function mandateDelegationId(mandateHash: HashString): string {
  return MANDATE_DELEGATION_PREFIX + mandateHash.slice("sha256:".length, "sha256:".length + 32);
}

/** Verifies the presentation and imports its claims for `agent` (see the module comment). */
export async function acceptOpenPaymentMandate(text: unknown, verify: MandateVerifyOptions, agent: MandateAgent): Promise<MandateAcceptance> {
  const verification = await verifyMandatePresentation(text, verify);
  const { decoded, issuer } = verification;
  if (verification.problems.length > 0 || !decoded || !issuer) {
    return { ok: false, refusals: verification.problems.map((p) => ({ code: p.code, message: p.message })), verification };
  }
  try {
    const iat = decoded.claims.iat;
    const base = importOpenPaymentMandate(decoded.claims, {
      agentKey: agent.publicKey,
      agentId: agent.agentId,
      principal: agent.principal,
      delegationId: mandateDelegationId(decoded.mandateHash),
      now: verify.now,
    });
    const approvedAt = Number.isSafeInteger(iat) ? new Date((iat as number) * 1000).toISOString() : base.granted_at;
    const delegation: Delegation = {
      ...base,
      purpose: `${base.purpose}; issued by ${issuer.orgId} (key ${issuer.kid})`.slice(0, 1000),
      approval: { type: "HUMAN_APPROVAL", approved_by: agent.principal.id, approved_at: approvedAt < base.granted_at ? approvedAt : base.granted_at },
    };
    return { ok: true, delegation, verification: { ...verification, issuer } };
  } catch (e) {
    if (e instanceof Ap2ImportError) return { ok: false, refusals: [{ code: e.code, message: e.message }], verification };
    throw e;
  }
}
