/**
 * TLS for an admission webhook on 127.0.0.1 in tests: a throw-away CA and a serving certificate
 * for IP 127.0.0.1 (and localhost) signed by it, made with the openssl command in `dir`. The API
 * server trusts the CA through the webhook configuration's `caBundle`.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What `makeWebhookCerts` made. */
export interface WebhookCerts {
  /** Folder with tls.crt and tls.key (WRIT_WEBHOOK_CERT_DIR). */
  certDir: string;
  /** The CA certificate, PEM. */
  caPem: string;
  /** base64 of the CA PEM (a `caBundle`). */
  caBundle: string;
}

/** Makes a CA and a 127.0.0.1 serving certificate under `dir` (see the module comment). */
export async function makeWebhookCerts(dir: string): Promise<WebhookCerts> {
  const certDir = join(dir, "serving-certs");
  await mkdir(certDir, { recursive: true });
  const ca = { key: join(dir, "ca.key"), crt: join(dir, "ca.crt") };
  const csr = join(dir, "tls.csr");
  const ext = join(dir, "tls.ext");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    ca.key,
    "-out",
    ca.crt,
    "-days",
    "2",
    "-subj",
    "/CN=writ-test-ca",
  ]);
  await run("openssl", [
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    join(certDir, "tls.key"),
    "-out",
    csr,
    "-subj",
    "/CN=127.0.0.1",
  ]);
  await writeFile(ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    ca.crt,
    "-CAkey",
    ca.key,
    "-CAcreateserial",
    "-out",
    join(certDir, "tls.crt"),
    "-days",
    "2",
    "-extfile",
    ext,
  ]);
  const caPem = await readFile(ca.crt, "utf8");
  return { certDir, caPem, caBundle: Buffer.from(caPem).toString("base64") };
}

/** The Validating and Mutating webhook configurations for a webhook server at `base` (https://127.0.0.1:PORT). */
export function webhookConfigurations(base: string, caBundle: string, failurePolicy: "Fail" | "Ignore" = "Fail"): Record<string, unknown>[] {
  const rules = [
    {
      apiGroups: ["writ.dev"],
      apiVersions: ["v1alpha1"],
      operations: ["CREATE", "UPDATE"],
      resources: ["delegations", "intentagreements", "subscriptions"],
      scope: "Namespaced",
    },
  ];
  const hook = (name: string, path: string) => ({
    name,
    clientConfig: { url: `${base}${path}`, caBundle },
    rules,
    failurePolicy,
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds: 10,
  });
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "writ-test" },
      webhooks: [hook("validate.writ.dev", "/validate")],
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: "writ-test" },
      webhooks: [{ ...hook("screen.writ.dev", "/screen"), reinvocationPolicy: "Never" }],
    },
  ];
}
