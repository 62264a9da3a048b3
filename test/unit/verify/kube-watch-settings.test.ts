/**
 * The watch's settings: auto turns it on only with KUBECONFIG or in-cluster, off never; the
 * stale bound and namespaces are checked, falling back with a problem.
 */
import { describe, expect, it } from "vitest";
import { kubeWatchEnabled, loadKubeWatchSettings } from "../../../src/verify/revocation/kube-watch-settings.js";

function load(env: Record<string, string>) {
  const problems: string[] = [];
  return { s: loadKubeWatchSettings(env, problems), problems };
}

describe("loadKubeWatchSettings", () => {
  it("is on by default only with a kubeconfig or in-cluster", () => {
    expect(kubeWatchEnabled(load({}).s)).toBe(false);
    expect(load({ KUBECONFIG: "/k/a.yaml:/k/b.yaml" }).s).toMatchObject({
      mode: "auto",
      kubeconfig: { kind: "file", path: "/k/a.yaml" },
      namespaces: [],
      staleMs: 5000,
    });
    expect(kubeWatchEnabled(load({ KUBECONFIG: "/k" }).s)).toBe(true);
    expect(load({ KUBERNETES_SERVICE_HOST: "10.0.0.1" }).s.kubeconfig).toEqual({ kind: "in-cluster" });
    expect(kubeWatchEnabled(load({ KUBECONFIG: "/k", WRIT_KUBE_WATCH: "OFF" }).s)).toBe(false);
  });

  it("reads the namespaces and the stale bound", () => {
    expect(load({ WRIT_WATCH_NAMESPACES: " a, b ,,", WRIT_WATCH_STALE_MS: "1500" }).s).toMatchObject({ namespaces: ["a", "b"], staleMs: 1500 });
  });

  it("falls back on unusable values with a problem", () => {
    const r = load({ WRIT_KUBE_WATCH: "yes", WRIT_WATCH_STALE_MS: "50", WRIT_WATCH_NAMESPACES: "ok,Not_A_Namespace" });
    expect(r.s).toMatchObject({ mode: "auto", staleMs: 5000, namespaces: ["ok"] });
    expect(r.problems).toHaveLength(3);
  });

  it("reads the controller's path: on by default, its Lease, the outage grace", () => {
    expect(load({}).s).toMatchObject({ controllerPath: true, controllerLease: undefined, outageGraceMs: 120_000 });
    expect(load({ WRIT_CONTROLLER_PATH: "off", WRIT_CONTROLLER_LEASE: "writ-controller", WRIT_API_OUTAGE_GRACE_MS: "0" }).s).toMatchObject({
      controllerPath: false,
      controllerLease: "writ-controller",
      outageGraceMs: 0,
    });
    const r = load({ WRIT_CONTROLLER_PATH: "maybe", WRIT_API_OUTAGE_GRACE_MS: "-5" });
    expect(r.s).toMatchObject({ controllerPath: true, outageGraceMs: 120_000 });
    expect(r.problems).toHaveLength(2);
  });
});
