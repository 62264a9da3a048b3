/**
 * Kubernetes Events (core/v1) about Writ resources: `kubectl describe` shows why a resource is
 * (not) ready. The reason is a Writ reason code for a refusal (type Warning) or a CamelCase
 * lifecycle reason (type Normal: Reconciled, Logged, Revoked). Best effort and bounded: an event
 * is posted in the background, at most `maxInFlight` at once (more are dropped and counted), and
 * a failure is logged, never an error of the reconcile.
 */
import { type KubeTransport, resourcePath } from "../sources/kubernetes/index.js";
import type { Clock } from "../core/time/index.js";
import { WRIT_API_VERSION, type WritResource } from "./kinds.js";
import { errorText, type Logger } from "./log.js";

/** Normal or Warning. */
export type EventType = "Normal" | "Warning";

/** The event component name (`source.component`). */
export const EVENT_COMPONENT = "writ-controller";
const MAX_MESSAGE = 1024;

/** Posts events (see the module comment). */
export class EventRecorder {
  private inFlight = 0;
  private dropped = 0;

  constructor(
    private readonly client: KubeTransport,
    private readonly opts: { instance: string; clock: Clock; log: Logger; maxInFlight?: number },
  ) {}

  /** Events not posted because too many were in flight. */
  droppedCount(): number {
    return this.dropped;
  }

  /** Records an event about `obj` of kind `kind` (returns at once). */
  record(obj: WritResource, kind: string, type: EventType, reason: string, message: string): void {
    const namespace = obj.metadata.namespace;
    if (!namespace) return;
    if (this.inFlight >= (this.opts.maxInFlight ?? 32)) {
      this.dropped += 1;
      return;
    }
    const now = new Date(this.opts.clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
    const body = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${obj.metadata.name}.`, namespace },
      involvedObject: {
        apiVersion: WRIT_API_VERSION,
        kind,
        name: obj.metadata.name,
        namespace,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
      reason,
      message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message,
      type,
      source: { component: EVENT_COMPONENT },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: EVENT_COMPONENT,
      reportingInstance: this.opts.instance,
    };
    this.inFlight += 1;
    this.client
      .request("POST", resourcePath({ group: "", version: "v1", plural: "events", namespace }), { body })
      .catch((err: unknown) => this.opts.log.warn("cannot record an event", { reason, object: `${namespace}/${obj.metadata.name}`, error: errorText(err) }))
      .finally(() => {
        this.inFlight -= 1;
      });
  }
}
