/**
 * The Writ operator: informers over the three custom resources, a rate-limited work queue,
 * reconcilers that store declarations through the API's store functions and report `.status`,
 * leader election on a Lease, controller-runtime metrics, health endpoints. See docs/operator.md.
 */
export { controllerCommand } from "./command.js";
export { startController, type ControllerDeps, type ControllerHandle } from "./manager.js";
export { loadControllerSettings, ControllerSettingsError, type ControllerSettings } from "./settings.js";
export { LeaderElector, leaderIdentity, microTime, type LeaderElectionOptions, type Lease } from "./leader-election.js";
export { WorkQueue, type QueueMetrics, type WorkQueueOptions } from "./queue/work-queue.js";
export {
  DEFAULT_RATE_LIMITS,
  ItemExponentialLimiter,
  MaxOfLimiter,
  TokenBucketLimiter,
  defaultRateLimiter,
  type RateLimiter,
  type RateLimitSettings,
} from "./queue/rate-limiter.js";
export { ControllerRunner, type ReconcileFn, type ReconcileResult, type RunnerOptions } from "./runner.js";
export { createControllerMetrics, type ControllerMetrics, type ReconcileResultLabel } from "./metrics.js";
export { CONTROLLER_NAMES, RECORD_ID_ANNOTATION, REVOKE_FINALIZER, WRIT_API_VERSION, type WritResource } from "./kinds.js";
export { mergeConditions, statusUnchanged, type Condition, type DesiredCondition } from "./conditions.js";
