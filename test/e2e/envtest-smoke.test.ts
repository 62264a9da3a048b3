/**
 * Smoke test of the envtest helper: a real kube-apiserver takes a CRD and a custom resource,
 * serves them back, survives a restart (state is in etcd), and helm runs beside it.
 * The first run provisions the binaries (hack/envtest/provision.sh: several minutes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.writ.dev
spec:
  group: example.writ.dev
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, shortNames: [wdg] }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer, minimum: 1 }
`;

const WIDGET = `
apiVersion: example.writ.dev/v1
kind: Widget
metadata: { name: w1, namespace: default }
spec: { size: 3 }
`;

function ok(r: CommandResult): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe("envtest", () => {
  let env: Envtest;

  beforeAll(async () => {
    const binDir = await ensureEnvtest();
    env = await startEnvtest({ binDir });
  }, 30 * 60_000);

  afterAll(async () => {
    await env?.stop();
  }, 60_000);

  it("serves a CRD and a custom resource, before and after an API server restart", async () => {
    ok(await env.kubectl(["apply", "-f", "-"], { input: CRD }));
    ok(await env.kubectl(["wait", "--for=condition=Established", "crd/widgets.example.writ.dev", "--timeout=30s"]));
    ok(await env.kubectl(["apply", "-f", "-"], { input: WIDGET }));
    const got = JSON.parse(ok(await env.kubectl(["get", "wdg", "w1", "-o", "json"]))) as { spec: { size: number } };
    expect(got.spec.size).toBe(3);

    const invalid = await env.kubectl(["apply", "-f", "-"], { input: WIDGET.replace("size: 3", "size: 0") });
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toMatch(/spec\.size/);

    await env.restartApiServer();
    expect(ok(await env.kubectl(["get", "widgets", "-o", "name"])).trim()).toBe("widget.example.writ.dev/w1");
  }, 120_000);

  it("runs helm against it", async () => {
    expect(ok(await env.helm(["version", "--short"]))).toMatch(/^v\d+\.\d+\.\d+/);
    expect(ok(await env.helm(["list", "-A", "-o", "json"])).trim()).toBe("[]");
  });

  it("reports version v1.20.2", async () => {
    const v = JSON.parse(ok(await env.kubectl(["version", "-o", "json"]))) as { serverVersion: { gitVersion: string } };
    expect(v.serverVersion.gitVersion).toBe("v1.20.2");
  });
});
