/**
 * Kubernetes as a source of declarations: a small typed client over @kubernetes/client-node 1.4
 * and a supervised informer (list + watch that restarts itself, relists on 410 Gone, watches for
 * silence and resyncs). Used by the controller; reusable by `writ serve` for read-only watches.
 */
export { KubeApiError, codeForStatus, isKubeError, statusOf, type KubeErrorCode } from "./errors.js";
export { isKubeObject, objectKey, resourcePath, splitKey, type KubeList, type KubeObject, type ObjectMeta, type ResourceRef } from "./objects.js";
export { JSON_PATCH, KubeClient, MERGE_PATCH, loadKubeConfig, type JsonPatchOp, type KubeTransport, type RequestOptions, type WatchHandle } from "./client.js";
export { WATCH_BACKOFF, backoffDelay, randomBetween, type BackoffPolicy } from "./backoff.js";
export { startInformer, type Informer, type InformerEventType, type InformerOptions, type InformerState } from "./informer.js";
export { ApiServerProbe } from "./api-probe.js";
export { type Binding, NamespaceBindings, ORG_LABEL, UNBOUND_RETRY_MS } from "./namespace-binding.js";
export { writRef } from "./writ-refs.js";
