/**
 * The PUBLIC demo identities of `POST /demo/check`: two Ed25519 keys whose seeds are the
 * SHA-256 of fixed labels, so anyone can re-derive them (docs/demo.md lists them). They sign
 * sample agreements only. They are public by design: never use them for anything else, and
 * never trust a signature by them as evidence of anything.
 */
import { sha256, type HashString } from "../canonical/index.js";
import { keyId, signerFromSeed, type Signer } from "../jose/index.js";

/** Label whose SHA-256 is the demo principal's Ed25519 seed. */
export const DEMO_PRINCIPAL_SEED_LABEL = "writ demo principal";
/** Label whose SHA-256 is the demo agent's Ed25519 seed. */
export const DEMO_AGENT_SEED_LABEL = "writ demo agent";

/** The demo principal's seed: SHA-256("writ demo principal"), hex. Public. */
export const DEMO_PRINCIPAL_SEED = "e904ef20e3a8a3b8132ac8c298451946f90c00ffd903e024cc033c1c68a99287";
/** The demo agent's seed: SHA-256("writ demo agent"), hex. Public. */
export const DEMO_AGENT_SEED = "e831eb99a82e74dc0cd045c4b0e1eaa161a1ac735e5b8c7831b1999148ffbfe7";

/** The fixed demo principal (a pseudonymous registry-style id). */
export const DEMO_PRINCIPAL = { type: "human", id: "prn_demo" } as const;
/** The fixed demo agent id. */
export const DEMO_AGENT_ID = "agent_demo";
/** The fixed id of every demo agreement. */
export const DEMO_AGREEMENT_ID = "agr_demo";
/** The fixed id of the demo delegation. */
export const DEMO_DELEGATION_ID = "del_demo";
/** The fixed intent id of the demo mandate. */
export const DEMO_INTENT_ID = "int_demo";
/** The fixed action id of the evaluated demo payment. */
export const DEMO_ACTION_ID = "act_demo";

let principal: Signer | undefined;
let agent: Signer | undefined;

/** The demo principal's signer (derived once from DEMO_PRINCIPAL_SEED). */
export function demoPrincipalSigner(): Signer {
  return (principal ??= signerFromSeed(DEMO_PRINCIPAL_SEED));
}

/** The demo agent's signer (derived once from DEMO_AGENT_SEED). */
export function demoAgentSigner(): Signer {
  return (agent ??= signerFromSeed(DEMO_AGENT_SEED));
}

/** The demo principal key's fingerprint (`sha256:` RFC 7638 thumbprint). */
export function demoPrincipalFingerprint(): HashString {
  return keyId(demoPrincipalSigner().publicJwk);
}

/** SHA-256 of a label as hex: how the demo seeds are derived (for checking the constants). */
export function seedFromLabel(label: string): string {
  return sha256(label).toString("hex");
}
