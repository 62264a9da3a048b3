/**
 * Leader election against an in-memory Lease API with optimistic concurrency, on a fake clock:
 * one of two replicas leads; the standby takes over only after the lease duration when the
 * leader stops renewing, at once when it releases; a leader that cannot renew for the renew
 * deadline steps down and takes the lease back when the API returns.
 */
import { describe, expect, it } from "vitest";
import { LeaderElector, leaderIdentity, microTime, type Lease } from "../../../src/controller/leader-election.js";
import type { KubeTransport, RequestOptions } from "../../../src/sources/kubernetes/client.js";
import { KubeApiError } from "../../../src/sources/kubernetes/errors.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const PATH = "/apis/coordination.k8s.io/v1/namespaces/writ-system/leases/writ-controller";

class LeaseApi implements KubeTransport {
  lease: Lease | undefined;
  private rv = 0;
  down = false;

  async request<T>(method: string, path: string, opts?: RequestOptions): Promise<T> {
    if (this.down) throw new KubeApiError("UNAVAILABLE", 0, "connect ECONNREFUSED");
    const body = structuredClone(opts?.body) as Lease;
    if (method === "GET") {
      expect(path).toBe(PATH);
      if (!this.lease) throw new KubeApiError("NOT_FOUND", 404, "not found", "NotFound");
      return structuredClone(this.lease) as T;
    }
    if (method === "POST") {
      expect(path).toBe("/apis/coordination.k8s.io/v1/namespaces/writ-system/leases");
      if (this.lease) throw new KubeApiError("ALREADY_EXISTS", 409, "exists", "AlreadyExists");
      this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
      return structuredClone(this.lease) as T;
    }
    if (method === "PUT") {
      if (body.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) throw new KubeApiError("CONFLICT", 409, "conflict", "Conflict");
      this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
      return structuredClone(this.lease) as T;
    }
    throw new Error(`unexpected ${method}`);
  }

  async watch(): Promise<{ abort(): void }> {
    throw new Error("no watches here");
  }

  holder(): string | null | undefined {
    return this.lease?.spec?.holderIdentity;
  }
}

const flush = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

function replica(api: LeaseApi, clock: FakeClock, id: string) {
  const log: string[] = [];
  const e = new LeaderElector({
    client: api,
    namespace: "writ-system",
    name: "writ-controller",
    identity: id,
    clock,
    random: () => 0,
    onStartedLeading: () => log.push("started"),
    onStoppedLeading: () => log.push("stopped"),
  });
  return { e, log };
}

/** Advances the clock in retry-sized steps, letting the electors' requests complete in between. */
async function run(clock: FakeClock, ms: number, step = 500) {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await flush();
  }
}

describe("LeaderElector", () => {
  it("lets exactly one of two replicas lead, and keeps it while it renews", async () => {
    const api = new LeaseApi();
    const clock = new FakeClock();
    const a = replica(api, clock, "a");
    const b = replica(api, clock, "b");
    a.e.start();
    await flush();
    b.e.start();
    await run(clock, 60_000);
    expect(a.e.isLeader()).toBe(true);
    expect(b.e.isLeader()).toBe(false);
    expect(a.log).toEqual(["started"]);
    expect(b.log).toEqual([]);
    expect(api.lease?.spec).toMatchObject({ holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(b.e.currentLeader()).toBe("a");
    await a.e.stop();
    await b.e.stop();
  });

  it("hands over after the lease duration when the leader stops renewing (killed), not before", async () => {
    const api = new LeaseApi();
    const clock = new FakeClock();
    const a = replica(api, clock, "a");
    const b = replica(api, clock, "b");
    a.e.start();
    await flush();
    b.e.start();
    await run(clock, 5000);
    await a.e.stop(); // no release: the lease stays with a until it expires
    const killedAt = clock.now();
    await run(clock, 12_000);
    expect(api.holder()).toBe("a");
    await run(clock, 8000);
    expect(api.holder()).toBe("b");
    expect(b.e.isLeader()).toBe(true);
    expect(clock.now() - killedAt).toBeGreaterThanOrEqual(15_000);
    expect(api.lease?.spec?.leaseTransitions).toBe(1);
    await b.e.stop();
  });

  it("hands over within a retry period when the leader releases the lease", async () => {
    const api = new LeaseApi();
    const clock = new FakeClock();
    const a = replica(api, clock, "a");
    const b = replica(api, clock, "b");
    a.e.start();
    await flush();
    b.e.start();
    await run(clock, 5000);
    await a.e.stop({ release: true });
    expect(a.log).toEqual(["started", "stopped"]);
    expect(api.holder()).toBe("");
    await run(clock, 3000);
    expect(api.holder()).toBe("b");
    await b.e.stop();
  });

  it("steps down when it cannot renew for the renew deadline, and leads again when the API returns", async () => {
    const api = new LeaseApi();
    const clock = new FakeClock();
    const a = replica(api, clock, "a");
    a.e.start();
    await run(clock, 3000);
    expect(a.e.isLeader()).toBe(true);
    api.down = true;
    await run(clock, 8000);
    expect(a.e.isLeader()).toBe(true);
    await run(clock, 4000);
    expect(a.e.isLeader()).toBe(false);
    expect(a.log).toEqual(["started", "stopped"]);
    api.down = false;
    await run(clock, 3000);
    expect(a.e.isLeader()).toBe(true);
    expect(a.log).toEqual(["started", "stopped", "started"]);
    await a.e.stop();
  });

  it("refuses timings that cannot be safe, and formats identities and MicroTime", () => {
    expect(
      () =>
        new LeaderElector({
          client: new LeaseApi(),
          namespace: "n",
          name: "l",
          identity: "i",
          leaseDurationMs: 5000,
          renewDeadlineMs: 10_000,
          onStartedLeading() {},
          onStoppedLeading() {},
        }),
    ).toThrow(RangeError);
    expect(leaderIdentity("writ-controller-abc")).toMatch(/^writ-controller-abc_[0-9a-f]{12}$/);
    expect(microTime(Date.parse("2026-11-21T06:00:00.123Z"))).toBe("2026-11-21T06:00:00.123000Z");
  });
});
