/**
 * The watch's fail-closed start: a kubeconfig that does not load gives a watch that stays
 * stale (verify steps up) with a reason saying why, instead of a data plane that silently
 * ignores the cluster; and a watch is stale until its first lists are done.
 */
import { describe, expect, it } from "vitest";
import { LocalApiServer } from "../../../src/sources/local/api-server.js";
import { LocalObjectStore } from "../../../src/sources/local/object-store.js";
import { createKubeWatch, KubeRevocationWatch } from "../../../src/verify/revocation/kube-watch.js";

const index = { markDelegationRevoked() {}, markAgreementRevoked() {}, isDelegationRevoked: () => false, isAgreementRevoked: () => false };
const noDb = { query: async () => ({ rows: [] }) } as never;

describe("KubeRevocationWatch", () => {
  it("stays stale, with the reason, when the kubeconfig cannot be loaded", async () => {
    const warnings: string[] = [];
    const watch = createKubeWatch(
      {
        mode: "auto",
        kubeconfig: { kind: "file", path: "/nonexistent/kubeconfig" },
        namespaces: [],
        staleMs: 5000,
        controllerPath: true,
        controllerLease: undefined,
        outageGraceMs: 120_000,
      },
      { index, db: noDb, log: { info: () => {}, warn: (_f, m) => warnings.push(m) } },
    );
    watch.start();
    expect(watch.stale()).toBe(true);
    expect(watch.staleReason()).toMatch(/^the Kubernetes watch cannot start: cannot load the kubeconfig: /);
    expect(warnings[0]).toMatch(/cannot start: verify steps up \(REVOCATION_STATE_STALE\)/);
    await watch.stop();
  });

  it("is stale until every informer has listed, then up", async () => {
    const api = new LocalApiServer({ store: new LocalObjectStore(), namespaceLabels: () => ({}) });
    const watch = new KubeRevocationWatch({ client: api, index, db: noDb, namespaces: ["a", "b"], staleMs: 60_000, probeIntervalMs: 0 });
    expect(watch.stale()).toBe(true);
    expect(watch.staleReason()).toMatch(/has not listed/);
    watch.start();
    await watch.synced();
    await expect.poll(() => watch.stale(), { timeout: 2000, interval: 10 }).toBe(false);
    expect(watch.staleReason()).toBeUndefined();
    await watch.stop();
  });
});
