/**
 * Which undisclosed digests of a mandate a presenter may leave out (docs/threat-model/sd-jwt.md).
 * Pure.
 *
 * RFC 9901 lets an issuer add decoy digests, and lets a holder leave out any claim the issuer
 * made selectively disclosable; a verifier cannot tell the two apart. In an AP2 open payment
 * mandate a claim left out may be one that NARROWS the grant: a constraint's `max`, `allowed`,
 * `not_before`/`not_after` or `max_occurrences`, the pre-set `payee` or `payment_amount`, or
 * `nbf`/`exp`. The holder is the agent, the party the mandate binds, so it must not be able to
 * drop one and look as if it had dropped a decoy. The rule:
 *
 * - in the objects where the mandate's constraints live, an `_sd` digest without a disclosure
 *   is a WITHHELD constraint and refused (DISCLOSURE_MISSING): the payload itself (it holds
 *   `exp`, `nbf`, `payee`, `payment_amount`, `constraints`), and every object inside
 *   `constraints`, `payee`, `payment_amount` or `execution_date`;
 * - elsewhere (inside `cnf`, `risk_data`, or another informative claim) it is a decoy or an
 *   informative claim left out, and accepted;
 * - array elements without a disclosure are refused wherever they are (./sd-jwt-disclosures.ts).
 */
import type { UndisclosedDigest } from "./sd-jwt-disclosures.js";
import type { MandateProblem } from "./sd-jwt-problems.js";

/** The top-level claims whose objects (at any depth) hold constraints. */
export const CONSTRAINT_CLAIMS: readonly string[] = ["constraints", "payee", "payment_amount", "execution_date"];

/** True when `path` (an object's path, as `UndisclosedDigest.path`) is one where a mandate's constraints live. */
export function isConstraintObject(path: string): boolean {
  if (path === "") return true;
  return CONSTRAINT_CLAIMS.some((c) => path === c || path.startsWith(`${c}.`) || path.startsWith(`${c}[`));
}

/** A DISCLOSURE_MISSING problem for every undisclosed `_sd` digest in an object where constraints live. */
export function withheldConstraintProblems(undisclosed: readonly UndisclosedDigest[]): MandateProblem[] {
  return undisclosed
    .filter((u) => u.kind === "claim" && isConstraintObject(u.path))
    .map((u) => ({
      code: "DISCLOSURE_MISSING" as const,
      message:
        `${u.path || "the payload"} has a claim without its disclosure (digest ${u.digest}): it is withheld, refused. ` +
        "In the payload and inside constraints, payee, payment_amount and execution_date a claim left out may narrow the grant " +
        "(an amount, a payee, a time bound), and cannot be told from a decoy; decoys are accepted only in other objects (cnf, risk_data)",
    }));
}
