/**
 * What the evaluator reads of a delegation, made once when it is stored or loaded
 * (prepare.ts, scope.ts and chain.ts build it): parsed instants, the scope's limits in minor
 * units and its lists as sets, the chain's links. The evaluator (src/core/evaluate) trusts these values.
 */
import type { HashString } from "../canonical/index.js";
import type { PreparedPeriods } from "../money/index.js";
import type { ChainLink, Condition, Delegation, Scope } from "./types.js";

/** A scope with amounts in minor units. */
export interface PreparedScope {
  scope: Scope;
  ceilingMinor?: bigint;
  cumulativeMinor?: bigint;
  /** Its period limits, parsed (src/core/money/periods.ts). */
  periods?: PreparedPeriods;
  actionTypes?: ReadonlySet<string>;
  merchants?: ReadonlySet<string>;
  categories?: ReadonlySet<string>;
  intents?: ReadonlySet<string>;
}

export interface PreparedLink {
  link: ChainLink;
  expiresAtMs: number;
  /** The stored delegation of this link is revoked (set when the chain was read from the store: `withStoredChain`). */
  revoked?: boolean;
  /** The stored delegation of this link is suspended (set by `withStoredChain`): everything below it is suspended too. */
  suspended?: boolean;
}

export interface PreparedDelegation {
  delegation: Delegation;
  grantedAtMs: number;
  expiresAtMs: number;
  scope: PreparedScope;
  conditions: Condition[];
  chain: PreparedLink[];
  /** First structural chain problem (discontinuity), or undefined. */
  chainBroken?: string;
  /** First widening found (field and link), or undefined. */
  chainWidened?: string;
  reconfirmedAtMs?: number;
  /** Key id of `principal.public_key`, when the delegation names the principal's key. */
  principalKid?: HashString;
  /** Problems found while preparing (each also fails closed: the delegation counts as expired). */
  problems?: string[];
}
