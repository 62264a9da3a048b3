/**
 * The controller's own condition reasons: the closed PascalCase union of the lifecycle reasons
 * it writes into a resource's `.status.conditions` (what happened to the declaration: validated,
 * stored, logged, waiting). They are not verdict reasons and never reach verify's answers; a
 * condition that is False because of a refusal carries a reason code of the one registry
 * instead (src/core/evaluate/reasons.ts), so a condition's reason is `ConditionReason`, one
 * union or the other. docs/reasons.md lists both (`npm run gen:docs`).
 */
import type { ReasonCode } from "../core/evaluate/index.js";

/** Each controller reason and what it says, in plain words (docs/reasons.md). */
export const CONTROLLER_REASONS = {
  Reconciled: "Ready: the declaration is stored as declared and verify enforces it (the phase says its effective status)",
  Validated: "Valid: the spec validates against its schema and the controller's checks",
  ChainIntact: "ChainValid: the delegation chain connects the principal to the agent, each link only narrowing (or it is a direct grant)",
  Bound: "Bound: the namespace is bound to an active registry organization and the declaration belongs to it",
  Stored: "Stored: this generation is stored",
  Verified: "Signed: every signature present verifies and the event and ledger chains are intact",
  Logged: "Logged: a transparency log entry records the current mandate hashes",
  AwaitingSignatures: "Logged: not every mandate is signed yet; the hashes are logged once they are",
  DelegationNotReady: "Stored, Ready: the agreement waits for the delegation it names to be stored (queued again when it is)",
  LogNotConfigured: "Logged, Ready: SVC_LOG_SIGNING_SEED is unset, so a signed agreement is stored but its mandate hashes are not logged",
  NotChecked: "ChainValid, Signed: not evaluated, because the spec does not validate",
  NotStored: "Stored, Ready: nothing is stored for this generation (yet), and no refusal says why",
  StoreUnavailable: "every condition Unknown: Postgres cannot be reached, so what is stored (and what verify answers) cannot be read; retried with backoff",
} as const satisfies Record<string, string>;

/** The controller's lifecycle reasons. */
export type ControllerReason = keyof typeof CONTROLLER_REASONS;
export const CONTROLLER_REASON_NAMES = Object.keys(CONTROLLER_REASONS) as ControllerReason[];

/** The reason of a status condition: a controller reason, or the reason code of a refusal or of what verify answers. */
export type ConditionReason = ControllerReason | ReasonCode;
