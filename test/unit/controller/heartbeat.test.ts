/**
 * `observedUpTo` (src/controller/heartbeat.ts): how far the controller has observed the cluster
 * is held back by an informer that is not watching (since it stopped), a probe that does not
 * reach the API server (since its last answer), and the oldest queued or processing key; nothing
 * is claimed before every informer has listed.
 */
import { describe, expect, it } from "vitest";
import { observedUpTo } from "../../../src/controller/heartbeat.js";
import type { ApiServerProbe } from "../../../src/sources/kubernetes/api-probe.js";
import type { Informer } from "../../../src/sources/kubernetes/informer.js";
import type { WorkQueue } from "../../../src/controller/queue/work-queue.js";

const informer = (o: { synced?: boolean; healthy?: boolean; since?: number; last?: number }) =>
  ({ hasSynced: () => o.synced ?? true, healthy: () => o.healthy ?? true, disconnectedSince: () => o.since, lastEventAt: () => o.last }) as unknown as Informer;
const queue = (pending?: number) => ({ oldestPendingSince: () => pending }) as unknown as WorkQueue;
const probe = (down?: number) => ({ unreachableSince: () => down }) as unknown as ApiServerProbe;

describe("observedUpTo", () => {
  it("is now while everything watches and nothing is pending", () => {
    expect(observedUpTo(1000, [informer({}), informer({})], [queue()], probe())).toBe(1000);
  });
  it("is undefined before every informer has listed", () => {
    expect(observedUpTo(1000, [informer({}), informer({ synced: false })], [queue()])).toBeUndefined();
  });
  it("is held back by a broken or silent watch, the probe, and the oldest pending key", () => {
    expect(observedUpTo(1000, [informer({ healthy: false, since: 400 })], [queue()])).toBe(400);
    expect(observedUpTo(1000, [informer({ healthy: false, last: 300 })], [queue()])).toBe(300);
    expect(observedUpTo(1000, [informer({})], [queue()], probe(200))).toBe(200);
    expect(observedUpTo(1000, [informer({})], [queue(900), queue(150)], probe())).toBe(150);
  });
});
