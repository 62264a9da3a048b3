/**
 * The PUBLIC sample identities of `config/samples/`: Ed25519 keys whose seeds are the SHA-256
 * of fixed labels, printed here, so anyone can re-derive them and sign with them. They sign
 * sample manifests only. Never use them for anything real, and never trust a signature by
 * them as evidence of anything.
 */
import { sha256 } from "../canonical/index.js";
import { signerFromSeed, type Signer } from "../jose/index.js";

/** Labels whose SHA-256 (hex) is each sample party's PUBLIC Ed25519 seed. */
export const PUBLIC_SAMPLE_SEED_LABELS = {
  /** The business principal, Acme Corp (org_acme). */
  principal: "writ PUBLIC SAMPLE seed, not a secret: principal org_acme",
  /** The agent Acme delegates to (agent_procurement). */
  procurementAgent: "writ PUBLIC SAMPLE seed, not a secret: agent agent_procurement",
  /** The agent the procurement agent re-delegates travel to (agent_travel). */
  travelAgent: "writ PUBLIC SAMPLE seed, not a secret: agent agent_travel",
} as const;

/** A sample party's name. */
export type SampleParty = keyof typeof PUBLIC_SAMPLE_SEED_LABELS;

/** The PUBLIC sample seed of a party: SHA-256 of its label, hex. */
export function publicSampleSeed(party: SampleParty): string {
  return sha256(PUBLIC_SAMPLE_SEED_LABELS[party]).toString("hex");
}

/** The signer of a sample party (from its PUBLIC sample seed). */
export function sampleSigner(party: SampleParty): Signer {
  return signerFromSeed(publicSampleSeed(party));
}
