/** Delegations: scopes, conditions, chains, approval, renewal, preparation and status. */
export type * from "./types.js";
export type { PreparedDelegation, PreparedLink, PreparedScope } from "./prepared.js";
export { DELEGATION_STATUSES } from "./types.js";
export { DelegationError, type DelegationErrorCode } from "./errors.js";
export { SCOPE_LIST_FIELDS, prepareScope, scopeWidenings, type ScopeListField } from "./scope.js";
export { isTimeZone, localTime, zoneOffsetMs, type LocalTime } from "../time/index.js";
export { validateCondition } from "./conditions.js";
export { conditionNarrows, conditionWidenings, describeCondition } from "./condition-narrowing.js";
export { chainCopyProblems, parentLink, prepareChain, withStoredChain, type PreparedChain, type StoredAncestor } from "./chain.js";
export { STANDING_LIFETIME_MS, preparedPrivilege, privilegeOf } from "./approval.js";
export { renewDelegation, silentExtension, type RenewalInit } from "./renewal.js";
export { prepareDelegation, type PreparedDelegationWithProblems } from "./prepare.js";
export { MAX_REASON_LENGTH, verifyDelegationRevocation } from "./signed-revocation.js";
