/**
 * The sample resources (Delegations, a signed IntentAgreement, a Subscription) signed with the
 * PUBLIC sample keys: what `writ samples` and `writ dev` render fresh, and what the reference
 * copies in config/samples/ hold (docs/operator.md, "Samples").
 */
export { PUBLIC_SAMPLE_SEED_LABELS, publicSampleSeed, sampleSigner, type SampleParty } from "./keys.js";
export {
  SAMPLE_AT,
  SAMPLE_NAMES,
  SAMPLE_WEBHOOK_URL,
  buildSamples,
  sampleNames,
  sampleSuffix,
  type Manifest,
  type Sample,
  type SampleOptions,
} from "./build.js";
