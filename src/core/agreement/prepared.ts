/**
 * What the evaluator reads of an intent agreement, made once when it is stored or loaded
 * (prepare.ts builds it): parsed limits in minor units, checked signatures and
 * acknowledgements, the ledger's state. The evaluator (src/core/evaluate) trusts these values.
 */
import type { HashString } from "../canonical/index.js";
import type { PreparedPeriods } from "../money/index.js";
import type { AckRole, IntentAgreement, Mandate } from "./types.js";

/** Signature state of one mandate. */
export type SignatureState = "valid" | "missing" | "invalid";

/** Per-role acknowledgement state against the current mandate hash. */
export type AckState = "current" | "outdated" | "missing";

/** A mandate with everything the engine needs precomputed. */
export interface PreparedMandate {
  mandate: Mandate;
  hash: HashString;
  signature: SignatureState;
  /** Key id of the signing principal key, when the mandate names one. */
  principalKid?: HashString;
  ceilingMinor?: bigint;
  sliceMinor?: bigint;
  /** Its period limits (with its recurrence's), parsed; `{problem}` when not usable (fail closed: PERIOD_LIMIT_EXCEEDED). */
  periods?: PreparedPeriods | { problem: string };
  notBeforeMs?: number;
  expiresAtMs?: number;
  /** State of every role in `required_acknowledgements`. */
  acks: ReadonlyArray<{ role: AckRole; state: AckState }>;
  /** Spent under this intent per the ledger (minor units of the mandate currency). */
  spentMinor: bigint;
}

export interface PreparedAgreement {
  agreement: IntentAgreement;
  mandates: PreparedMandate[];
  /** First problem in the event chain, or undefined when intact. */
  eventChainProblem?: string;
  /** "ok", "unknown" (ledger omitted) or a description of the first problem. */
  ledger: { state: "ok" } | { state: "unknown" } | { state: "broken"; problem: string };
  ledgerAsOfMs: number;
  ledgerSequence: number;
  /** Total spent across intents (minor units of parent_limits currency, or of the mandates when they share one). */
  totalSpentMinor: bigint;
  /** First parent_limits violation, or undefined. */
  parentLimitsProblem?: string;
  parentCeilingMinor?: bigint;
  parentCumulativeMinor?: bigint;
  revocation: "none" | "valid" | { state: "invalid"; problem: string };
}
