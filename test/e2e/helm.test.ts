/**
 * The Helm chart (charts/writ) with a real helm and a real kube-apiserver 1.20 (envtest):
 * lint; render with default values and with every option on; apply the rendered manifests with
 * server-side dry-run; install and uninstall for real (CRDs come from crds/ and stay after
 * uninstall); RBAC checked by the API server's own authorizer (kubectl auth can-i --as);
 * values.schema.json refuses bad values.
 *
 * ServiceMonitor and PrometheusRule need the Prometheus Operator's CRDs, and the webhook's
 * Certificate and Issuer cert-manager's: minimal stand-ins from
 * test/fixtures/monitoring-coreos-crds.yaml and cert-manager-crds.yaml are installed first.
 */
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { ensureEnvtest, startEnvtest, type CommandResult, type Envtest } from "../helpers/envtest.js";

const CHART = fileURLToPath(new URL("../../charts/writ", import.meta.url));
const CRDS = fileURLToPath(new URL("../../crds/", import.meta.url));
const MONITORING_CRDS = fileURLToPath(new URL("../fixtures/monitoring-coreos-crds.yaml", import.meta.url));
const CERT_MANAGER_CRDS = fileURLToPath(new URL("../fixtures/cert-manager-crds.yaml", import.meta.url));
const DOCKERFILE = fileURLToPath(new URL("../../Dockerfile", import.meta.url));
const NS = "writ-system";
/** The database every install needs (the chart refuses to install without one). */
const DB = ["--set", "secret.databaseUrl=postgres://writ:secret@postgres.writ-system:5432/writ"];
const TENANTS = ["team-a", "team-b"];

/** Every option on: monitoring, PDB, an existing Secret, extra env, namespaced RBAC, scheduling. */
const ALL_ON = {
  image: { repository: "registry.example.com/writ", digest: `sha256:${"a".repeat(64)}`, pullPolicy: "Always" },
  imagePullSecrets: [{ name: "registry-credentials" }],
  watchNamespaces: TENANTS,
  dataPlane: {
    replicaCount: 3,
    service: { type: "ClusterIP", port: 80, annotations: { "example.com/team": "payments" } },
    extraEnv: [
      { name: "BUR_REPORT_DAILY_CAP", value: "50" },
      { name: "SVC_PUSH_NOTIFIER_JWK", valueFrom: { secretKeyRef: { name: "notifier", key: "jwk" } } },
    ],
    podAnnotations: { "example.com/scrape": "true" },
    podLabels: { tier: "api" },
    nodeSelector: { "kubernetes.io/os": "linux" },
    tolerations: [{ key: "dedicated", operator: "Equal", value: "writ", effect: "NoSchedule" }],
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { "app.kubernetes.io/component": "data-plane" } } },
          },
        ],
      },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: { "app.kubernetes.io/component": "data-plane" } },
      },
    ],
  },
  controller: { replicaCount: 2, leaderElection: { leaseName: "writ-leader" }, extraEnv: [{ name: "LOG_LEVEL", value: "debug" }] },
  serviceAccount: { annotations: { "example.com/role": "writ" } },
  config: { LOG_LEVEL: "warn", WRIT_LOG_ORIGIN: "writ.example.com/log" },
  secret: { existingSecret: "writ-settings" },
  podDisruptionBudget: { enabled: true, minAvailable: 2 },
  serviceMonitor: { enabled: true, interval: "15s", scrapeTimeout: "5s", labels: { release: "prometheus" } },
  prometheusRule: { enabled: true, labels: { release: "prometheus" }, for: "5m", thresholds: { denyRatio: 0.4, revocationLagSeconds: 0.5 } },
  admissionWebhook: { failurePolicy: "Ignore", timeoutSeconds: 5, certificate: { source: "cert-manager" } },
  grafanaDashboard: { enabled: true, annotations: { grafana_folder: "Writ" } },
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}
interface Container {
  name: string;
  args: string[];
  env: Array<{ name: string; value?: string }>;
  envFrom: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  ports: Array<{ name: string; containerPort: number }>;
  securityContext: Record<string, unknown>;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  startupProbe: { httpGet: { path: string; port: string } };
  volumeMounts: Array<{ name: string; mountPath: string }>;
}
interface Deployment extends K8sObject {
  spec: { replicas: number; template: { spec: { securityContext: Record<string, unknown>; containers: Container[]; serviceAccountName: string } } };
}
interface Webhook {
  name: string;
  clientConfig: { service?: { name: string; namespace: string; path: string; port: number }; caBundle?: string };
  rules: unknown[];
  failurePolicy: string;
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function ok(r: CommandResult): string {
  expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout;
}

function objects(yamlText: string): K8sObject[] {
  return parseAllDocuments(yamlText)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

const find = <T extends K8sObject>(objs: K8sObject[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} in ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return o as T;
};

describe("the Helm chart", () => {
  let env: Envtest;
  let tmp: string;
  let allOnValues: string;
  const helm = (args: string[]) => env.helm(args, { timeoutMs: 120_000 });
  const kubectl = (args: string[], input?: string) => env.kubectl(args, input === undefined ? {} : { input });
  /** `helm template` with `extra`; with the database unless the values name an existing Secret (every option on). */
  const template = async (...extra: string[]) =>
    objects(ok(await helm(["template", "writ", CHART, "-n", NS, ...(extra.includes(allOnValues) ? [] : DB), ...extra])));

  beforeAll(async () => {
    const binDir = await ensureEnvtest();
    env = await startEnvtest({ binDir });
    tmp = await mkdtemp(join(tmpdir(), "writ-helm-test-"));
    allOnValues = join(tmp, "all-on.yaml");
    await writeFile(allOnValues, stringify(ALL_ON));
    for (const ns of [NS, ...TENANTS]) ok(await kubectl(["create", "namespace", ns]));
  }, 30 * 60_000);

  afterAll(async () => {
    await env?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it("passes helm lint, with default values and with every option on", async () => {
    expect(ok(await helm(["lint", "--strict", CHART, ...DB]))).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    ok(await helm(["lint", "--strict", CHART, "-f", allOnValues]));
  });

  it("installs for real: CRDs from crds/ first, and uninstall keeps them", async () => {
    ok(await helm(["install", "writ", CHART, "-n", NS, "--set", "secret.adminToken=e2e-admin-token", ...DB]));
    const crds = ok(await kubectl(["get", "crd", "-o", "name"]))
      .trim()
      .split("\n")
      .sort();
    expect(crds).toEqual([
      "customresourcedefinition.apiextensions.k8s.io/delegations.writ.dev",
      "customresourcedefinition.apiextensions.k8s.io/intentagreements.writ.dev",
      "customresourcedefinition.apiextensions.k8s.io/subscriptions.writ.dev",
    ]);
    const deployments = ok(await kubectl(["get", "deploy", "-n", NS, "-o", "name"]))
      .trim()
      .split("\n")
      .sort();
    expect(deployments).toEqual(["deployment.apps/writ-controller", "deployment.apps/writ-data-plane"]);
  });

  describe("RBAC, as the API server authorizes it", () => {
    const can = async (sa: string, verb: string, resource: string, ns: string, sub?: string) => {
      const args = ["auth", "can-i", verb, resource, "-n", ns, `--as=system:serviceaccount:${NS}:${sa}`];
      if (sub) args.push(`--subresource=${sub}`);
      const r = await kubectl(args);
      return r.stdout.trim();
    };

    it("lets the data plane only list and watch Delegations and IntentAgreements", async () => {
      for (const verb of ["list", "watch"]) {
        expect(await can("writ-data-plane", verb, "delegations.writ.dev", "team-a")).toBe("yes");
        expect(await can("writ-data-plane", verb, "intentagreements.writ.dev", "team-a")).toBe("yes");
      }
      expect(await can("writ-data-plane", "get", "delegations.writ.dev", "team-a")).toBe("no");
      expect(await can("writ-data-plane", "list", "subscriptions.writ.dev", "team-a")).toBe("no");
      expect(await can("writ-data-plane", "update", "delegations.writ.dev", "team-a")).toBe("no");
      expect(await can("writ-data-plane", "patch", "delegations.writ.dev", "team-a", "status")).toBe("no");
      expect(await can("writ-data-plane", "get", "secrets", NS)).toBe("no");
      expect(await can("writ-data-plane", "create", "events", "team-a")).toBe("no");
    });

    it("lets the controller list, watch and patch the three kinds, patch their status, create Events, and hold its Lease", async () => {
      for (const kind of ["delegations", "intentagreements", "subscriptions"]) {
        for (const verb of ["list", "watch", "patch"]) expect(await can("writ-controller", verb, `${kind}.writ.dev`, "team-b")).toBe("yes");
        for (const verb of ["get", "update", "delete", "create"]) expect(await can("writ-controller", verb, `${kind}.writ.dev`, "team-b")).toBe("no");
        expect(await can("writ-controller", "patch", `${kind}.writ.dev`, "team-b", "status")).toBe("yes");
        expect(await can("writ-controller", "update", `${kind}.writ.dev`, "team-b", "finalizers")).toBe("no");
      }
      // It reads the writ.dev/org-id label of a namespace (get), and nothing more about namespaces.
      expect(await can("writ-controller", "get", "namespaces", "team-b")).toBe("yes");
      expect(await can("writ-controller", "list", "namespaces", "team-b")).toBe("no");
      expect(await can("writ-controller", "update", "namespaces", "team-b")).toBe("no");
      // The data plane reads a namespace's label too (the watch's tenancy check), and only that.
      expect(await can("writ-data-plane", "get", "namespaces", "team-b")).toBe("yes");
      expect(await can("writ-data-plane", "list", "namespaces", "team-b")).toBe("no");
      expect(await can("writ-controller", "create", "events", "team-b")).toBe("yes");
      expect(await can("writ-controller", "create", "leases.coordination.k8s.io", NS)).toBe("yes");
      expect(await can("writ-controller", "update", "leases.coordination.k8s.io/writ-controller", NS)).toBe("yes");
      expect(await can("writ-controller", "update", "leases.coordination.k8s.io/someone-else", NS)).toBe("no");
      expect(await can("writ-controller", "create", "leases.coordination.k8s.io", "team-b")).toBe("no");
      expect(await can("writ-controller", "get", "secrets", NS)).toBe("no");
    });

    it("leaves the CRDs in place after helm uninstall", async () => {
      ok(await helm(["uninstall", "writ", "-n", NS]));
      expect(ok(await kubectl(["get", "deploy", "-n", NS, "-o", "name"])).trim()).toBe("");
      const crds = ok(await kubectl(["get", "crd", "-o", "name"]));
      for (const n of ["delegations", "intentagreements", "subscriptions"]) expect(crds).toContain(`${n}.writ.dev`);
    });
  });

  it("renders the chart's crds/ as exactly the generated CRDs", async () => {
    const withCrds = await template("--include-crds");
    const rendered = withCrds
      .filter((o) => o.kind === "CustomResourceDefinition")
      .map((o) => o.metadata.name)
      .sort();
    expect(rendered).toEqual(["delegations.writ.dev", "intentagreements.writ.dev", "subscriptions.writ.dev"]);
    for (const name of rendered) {
      const generated = parse(readFileSync(join(CRDS, `writ.dev_${name.split(".")[0]}.yaml`), "utf8")) as unknown;
      expect(withCrds.find((o) => o.metadata.name === name)).toEqual(generated);
    }
  });

  it("renders the defaults: 2 data-plane and 2 controller replicas (a PDB), restricted pods, probes, resources, metrics on their own port", async () => {
    const objs = await template();
    const kinds = objs.map((o) => o.kind).sort();
    expect(kinds).toEqual([
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ConfigMap",
      "Deployment",
      "Deployment",
      "MutatingWebhookConfiguration",
      "PodDisruptionBudget",
      "Role",
      "RoleBinding",
      "Secret",
      "Secret",
      "Service",
      "Service",
      "ServiceAccount",
      "ServiceAccount",
      "ValidatingWebhookConfiguration",
    ]);
    expect(find<K8sObject & { spec: { minAvailable: number } }>(objs, "PodDisruptionBudget", "writ-controller").spec.minAvailable).toBe(1);
    const dp = find<Deployment>(objs, "Deployment", "writ-data-plane");
    const ctl = find<Deployment>(objs, "Deployment", "writ-controller");
    expect(dp.spec.replicas).toBe(2);
    expect(ctl.spec.replicas).toBe(2);
    // Requests cover the measured idle RSS (controller 152 MiB, data plane 150 MiB, compiled build).
    expect(ctl.spec.template.spec.containers[0]?.resources).toEqual({ requests: { cpu: "100m", memory: "192Mi" }, limits: { memory: "512Mi" } });
    expect(dp.spec.template.spec.containers[0]?.resources).toEqual({ requests: { cpu: "100m", memory: "192Mi" }, limits: { memory: "512Mi" } });
    const [dpc, ctlc] = [dp.spec.template.spec.containers[0]!, ctl.spec.template.spec.containers[0]!];
    expect(dpc.args).toEqual(["serve"]);
    expect(ctlc.args).toEqual(["controller"]);
    expect(dpc.ports).toEqual([
      { name: "http", containerPort: 8080, protocol: "TCP" },
      { name: "metrics", containerPort: 9090, protocol: "TCP" },
    ]);
    expect(dpc.env).toEqual(
      expect.arrayContaining([
        { name: "METRICS_PORT", value: "9090" },
        { name: "WRIT_CONTROLLER_LEASE", value: "writ-controller" },
      ]),
    );
    const svc = find<K8sObject & { spec: { ports: unknown[] } }>(objs, "Service", "writ");
    expect(svc.spec.ports).toEqual([{ name: "http", port: 8080, targetPort: "http", protocol: "TCP" }]);
    for (const d of [dp, ctl]) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      const c = pod.containers[0]!;
      expect(c.securityContext).toEqual({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(c.livenessProbe.httpGet.path).toBe("/healthz");
      expect(c.readinessProbe.httpGet.path).toBe("/readyz");
      expect(c.resources.requests?.cpu).toBeDefined();
      expect(c.resources.limits?.memory).toBeDefined();
      expect(c.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
      expect(c.envFrom).toEqual([{ configMapRef: { name: "writ" } }, { secretRef: { name: "writ" } }]);
      expect(c.env).toContainEqual({ name: "HOST", value: "0.0.0.0" });
    }
    expect(ctlc.env).toContainEqual({ name: "WRIT_LEADER_ELECTION_LEASE", value: "writ-controller" });
    expect(ctlc.env).toContainEqual({ name: "WRIT_LEADER_ELECTION_NAMESPACE", value: NS });
    expect(ctlc.env).toEqual(
      expect.arrayContaining([
        { name: "WRIT_LEADER_ELECTION_LEASE_DURATION", value: "15" },
        { name: "WRIT_LEADER_ELECTION_RENEW_DEADLINE", value: "10" },
        { name: "WRIT_LEADER_ELECTION_RETRY_PERIOD", value: "2" },
      ]),
    );
    const dpRole = find<K8sObject & { rules: Rule[] }>(objs, "ClusterRole", "writ-data-plane");
    expect(dpRole.rules).toEqual([
      { apiGroups: ["writ.dev"], resources: ["delegations", "intentagreements"], verbs: ["list", "watch"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get"] },
    ]);
    const ctlRole = find<K8sObject & { rules: Rule[] }>(objs, "ClusterRole", "writ-controller");
    expect(ctlRole.rules).toEqual([
      { apiGroups: ["writ.dev"], resources: ["delegations", "intentagreements", "subscriptions"], verbs: ["list", "watch", "patch"] },
      { apiGroups: ["writ.dev"], resources: ["delegations/status", "intentagreements/status", "subscriptions/status"], verbs: ["patch"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get"] },
    ]);
    find(objs, "ClusterRole", "writ-view");
    find(objs, "ClusterRole", "writ-edit");
    const lease = find<K8sObject & { rules: Rule[] }>(objs, "Role", "writ-controller-leader-election");
    expect(lease.metadata.namespace).toBe(NS);
    expect(lease.rules.flatMap((r) => r.verbs).sort()).toEqual(["create", "get", "update"]);
  });

  it("renders every option on: monitoring, PDB, existing Secret, extra env, namespaced RBAC", async () => {
    const objs = await template("-f", allOnValues);
    const names = objs.map((o) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        `ServiceMonitor/${NS}/writ`,
        `PrometheusRule/${NS}/writ`,
        `PodDisruptionBudget/${NS}/writ-data-plane`,
        `Service/${NS}/writ-controller-metrics`,
        `Service/${NS}/writ-data-plane-metrics`,
        `PodDisruptionBudget/${NS}/writ-controller`,
        "Role/team-a/writ-data-plane",
        "Role/team-b/writ-controller",
        "RoleBinding/team-b/writ-data-plane",
      ]),
    );
    expect(objs.filter((o) => o.kind === "Secret")).toEqual([]);
    // Namespaced: the processes get Roles only; the tenant roles are aggregated ClusterRoles whatever the namespaces.
    expect(objs.filter((o) => o.kind.startsWith("Cluster")).map((o) => o.metadata.name)).toEqual(["writ-view", "writ-edit"]);
    const dp = find<Deployment>(objs, "Deployment", "writ-data-plane");
    const c = dp.spec.template.spec.containers[0]!;
    expect(dp.spec.replicas).toBe(3);
    expect(c.envFrom).toContainEqual({ secretRef: { name: "writ-settings" } });
    expect(c.env).toContainEqual({ name: "BUR_REPORT_DAILY_CAP", value: "50" });
    expect(c.env).toContainEqual({ name: "WRIT_WATCH_NAMESPACES", value: "team-a,team-b" });
    expect((c as unknown as { image: string }).image).toBe(`registry.example.com/writ@sha256:${"a".repeat(64)}`);
    const rule = find<K8sObject & { spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> } }>(objs, "PrometheusRule", "writ");
    const alerts = rule.spec.groups.flatMap((g) => g.rules);
    expect(alerts.map((a) => a.alert)).toEqual([
      "WritDenyRateHigh",
      "WritStepUpRateHigh",
      "WritRevocationLagHigh",
      "WritWatchDown",
      "WritNoLeader",
      "WritRevocationStateStale",
      "WritReconcileErrors",
    ]);
    const exprs = alerts.map((a) => a.expr).join("\n");
    expect(exprs).toContain("writ_kube_watch_up");
    expect(exprs).toContain("writ_controller_watch_up");
    expect(exprs).toMatch(/sum\(leader_election_master_status\{namespace="writ-system",name="writ-leader"\}\) or on\(\) vector\(0\)\) < 1/);
    const sm = find<K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] } }>(objs, "ServiceMonitor", "writ");
    expect(sm.spec.endpoints.map((e) => e.port)).toEqual(["metrics"]);
    expect(sm.spec.selector.matchLabels["writ.dev/metrics"]).toBe("true");
    const publicSvc = find<K8sObject & { spec: { ports: { name: string }[] } }>(objs, "Service", "writ");
    expect(publicSvc.spec.ports.map((p) => p.name)).toEqual(["http"]);
    expect(alerts.map((a) => a.expr).join("\n")).toMatch(/writ_verdicts_total.*verdict="DENY".*\n.*> 0\.4/);
    expect(alerts.map((a) => a.expr).join("\n")).toContain("writ_revocation_lag_seconds_bucket");
    expect(alerts.map((a) => a.expr).join("\n")).toContain("controller_runtime_reconcile_errors_total");
    // The Grafana dashboard, for the sidecar: its label, and the chart's dashboards/writ.json as it is.
    const dashboard = find<K8sObject & { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; data: Record<string, string> }>(
      objs,
      "ConfigMap",
      "writ-grafana-dashboard",
    );
    expect(dashboard.metadata.labels.grafana_dashboard).toBe("1");
    expect(dashboard.metadata.annotations).toEqual({ grafana_folder: "Writ" });
    expect(JSON.parse(dashboard.data["writ.json"] ?? "")).toEqual(JSON.parse(readFileSync(join(CHART, "dashboards", "writ.json"), "utf8")));
  });

  it("renders the admission webhooks: a Service on every controller replica, a generated CA that signs the serving certificate, failurePolicy Fail", async () => {
    const objs = await template();
    const validating = find<K8sObject & { webhooks: Webhook[] }>(objs, "ValidatingWebhookConfiguration", "writ");
    const screening = find<K8sObject & { webhooks: Webhook[] }>(objs, "MutatingWebhookConfiguration", "writ-screen");
    const [v, m] = [validating.webhooks[0]!, screening.webhooks[0]!];
    expect([v.name, v.clientConfig.service?.path, m.name, m.clientConfig.service?.path]).toEqual([
      "validate.writ.dev",
      "/validate",
      "screen.writ.dev",
      "/screen",
    ]);
    for (const w of [v, m]) {
      expect(w).toMatchObject({ failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"], timeoutSeconds: 10 });
      expect(w.clientConfig.service).toEqual({ name: "writ-controller-webhook", namespace: NS, path: w.clientConfig.service?.path, port: 443 });
      expect(w.rules).toEqual([
        {
          apiGroups: ["writ.dev"],
          apiVersions: ["v1alpha1"],
          operations: ["CREATE", "UPDATE"],
          resources: ["delegations", "intentagreements", "subscriptions"],
          scope: "Namespaced",
        },
      ]);
    }
    const tls = find<K8sObject & { type: string; data: Record<string, string> }>(objs, "Secret", "writ-controller-webhook-tls");
    expect(tls.type).toBe("kubernetes.io/tls");
    const pem = (k: string) => Buffer.from(tls.data[k] ?? "", "base64").toString("utf8");
    expect(v.clientConfig.caBundle).toBe(tls.data["ca.crt"]);
    const ca = new X509Certificate(pem("ca.crt"));
    const serving = new X509Certificate(pem("tls.crt"));
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.subjectAltName).toContain(`DNS:writ-controller-webhook.${NS}.svc`);
    const svc = find<K8sObject & { spec: { selector: Record<string, string>; ports: unknown[] } }>(objs, "Service", "writ-controller-webhook");
    expect(svc.spec.selector["app.kubernetes.io/component"]).toBe("controller");
    expect(svc.spec.ports).toEqual([{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }]);
    const ctl = find<Deployment>(objs, "Deployment", "writ-controller").spec.template.spec.containers[0]!;
    expect(ctl.ports).toContainEqual({ name: "webhook", containerPort: 9443, protocol: "TCP" });
    expect(ctl.env).toEqual(
      expect.arrayContaining([
        { name: "WRIT_WEBHOOK_PORT", value: "9443" },
        { name: "WRIT_WEBHOOK_CERT_DIR", value: "/etc/writ/webhook-certs" },
      ]),
    );
    expect(ctl.volumeMounts).toContainEqual({ name: "webhook-certs", mountPath: "/etc/writ/webhook-certs", readOnly: true });

    // cert-manager: a Certificate from a self-signed Issuer, and the CA injector fills the caBundle.
    const cm = await template("-f", allOnValues);
    const cert = find<K8sObject & { spec: { secretName: string; issuerRef: unknown; dnsNames: string[] } }>(cm, "Certificate", "writ-controller-webhook");
    expect(cert.spec).toMatchObject({ secretName: "writ-controller-webhook-tls", issuerRef: { name: "writ-controller-selfsigned", kind: "Issuer" } });
    expect(cert.spec.dnsNames).toContain(`writ-controller-webhook.${NS}.svc`);
    find(cm, "Issuer", "writ-controller-selfsigned");
    const injected = find<K8sObject & { metadata: { annotations?: Record<string, string> }; webhooks: Webhook[] }>(
      cm,
      "ValidatingWebhookConfiguration",
      "writ",
    );
    expect(injected.metadata.annotations?.["cert-manager.io/inject-ca-from"]).toBe(`${NS}/writ-controller-webhook`);
    expect(injected.webhooks[0]?.clientConfig.caBundle).toBeUndefined();
    expect(injected.webhooks[0]?.failurePolicy).toBe("Ignore");
    expect(cm.filter((o) => o.kind === "Secret")).toEqual([]);
    // Off: no webhook objects, no webhook port.
    const off = await template("--set", "admissionWebhook.enabled=false");
    expect(off.filter((o) => o.kind.endsWith("WebhookConfiguration") || o.metadata.name.includes("webhook"))).toEqual([]);
  });

  it("applies with server-side dry-run: defaults and every option on", async () => {
    ok(await kubectl(["apply", "-f", MONITORING_CRDS, "-f", CERT_MANAGER_CRDS]));
    ok(
      await kubectl([
        "wait",
        "--for=condition=Established",
        "--timeout=30s",
        "crd/servicemonitors.monitoring.coreos.com",
        "crd/prometheusrules.monitoring.coreos.com",
        "crd/issuers.cert-manager.io",
        "crd/certificates.cert-manager.io",
      ]),
    );
    for (const values of [DB, ["-f", allOnValues]]) {
      // --kube-version: render what Helm would render for this API server (policy/v1beta1 PDB on 1.20).
      const rendered = ok(await helm(["template", "writ", CHART, "-n", NS, "--kube-version", "1.20.2", ...values]));
      const out = ok(await kubectl(["apply", "--dry-run=server", "-f", "-"], rendered));
      const lines = out.trim().split("\n");
      expect(lines.length).toBe(objects(rendered).length);
      for (const line of lines) expect(line).toMatch(/ (created|configured|unchanged) \(server dry run\)$/);
    }
  });

  it.each([
    ["a negative replica count", ["--set", "dataPlane.replicaCount=-1"], /dataPlane\/replicaCount/],
    [
      "an unknown value (a typo)",
      ["--set", "dataplane.replicaCount=2"],
      /additional properties 'dataplane' not allowed|Additional property dataplane is not allowed/,
    ],
    ["a secret setting in the ConfigMap", ["--set", "config.DATABASE_URL=postgres://x"], /\/config/],
    ["a malformed signing seed", ["--set", "secret.logSigningSeed=not-a-seed"], /logSigningSeed/],
    ["a database URL that is not postgres", ["--set", "secret.databaseUrl=mysql://db"], /databaseUrl/],
    ["an unknown image pull policy", ["--set", "image.pullPolicy=Sometimes"], /pullPolicy/],
    ["an existing Secret plus inline secrets", ["--set", "secret.existingSecret=s", "--set", "secret.adminToken=x"], /secret\.existingSecret is set/],
    ["an install without a database", [], /secret\.databaseUrl is required/],
    [
      "leader election timings client-go would refuse",
      [...DB, "--set", "controller.leaderElection.renewDeadlineSeconds=20"],
      /leaseDurationSeconds \(15\) must be longer than renewDeadlineSeconds \(20\)/,
    ],
  ])("refuses %s", async (_what, args, message) => {
    const r = await helm(["template", "writ", CHART, ...args]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it("runs as the image's user: the chart's runAsUser is the Dockerfile's USER", async () => {
    const user = /^USER (\d+):(\d+)$/m.exec(readFileSync(DOCKERFILE, "utf8"));
    const pod = find<Deployment>(await template(), "Deployment", "writ-data-plane").spec.template.spec.securityContext;
    expect([pod.runAsUser, pod.runAsGroup]).toEqual([Number(user?.[1]), Number(user?.[2])]);
  });
});
