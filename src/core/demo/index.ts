/**
 * The demo check's pure core: the public demo keys and ids, the request rules, the building
 * of the sample agreement, delegation and action, and the evaluation (docs/demo.md).
 */
export {
  DEMO_ACTION_ID,
  DEMO_AGENT_ID,
  DEMO_AGENT_SEED,
  DEMO_AGENT_SEED_LABEL,
  DEMO_AGREEMENT_ID,
  DEMO_DELEGATION_ID,
  DEMO_INTENT_ID,
  DEMO_PRINCIPAL,
  DEMO_PRINCIPAL_SEED,
  DEMO_PRINCIPAL_SEED_LABEL,
  demoAgentSigner,
  demoPrincipalFingerprint,
  demoPrincipalSigner,
  seedFromLabel,
} from "./keys.js";
export { DemoInputError, type DemoErrorCode } from "./errors.js";
export { DEMO_TEXT_LIMITS, parseDemoCheckRequest, type DemoCheckRequest, type DemoIntent, type DemoPayment } from "./request.js";
export { expiryFor, isCalendarDay } from "./time-limit.js";
export { DEMO_DELEGATION_LIFETIME_MS, buildDemoAgreement, buildDemoRecords, demoAction, demoDelegation, demoMandate, type DemoRecords } from "./build.js";
export { runDemoCheck, type DemoCheckResult } from "./check.js";
export {
  acknowledgedByDemoParties,
  DEMO_PRINCIPAL_EMAIL,
  DEMO_SEED_ORGS,
  DEMO_SEED_PRINCIPAL_ID,
  demoAckSigner,
  demoKeyBytes,
  demoKeyToken,
  type DemoSeedOrg,
  seededDemoDelegation,
} from "./seed.js";
