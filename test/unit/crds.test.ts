/**
 * The generated CRDs: `crds/` and `charts/writ/crds/` are exactly what hack/crdgen renders
 * from src/core/schemas today (fails when stale: run npm run gen:crds), and every CRD has the
 * shape Writ promises (group, version, names, category, status subresource, printer columns, a
 * description on every field, only structural keywords).
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CRD_DIRS, GENERATED_FILE, renderCrdFiles } from "../../hack/crdgen/render.js";
import { writCrds, type StructuralSchema } from "../../src/core/crd/index.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Short names of Kubernetes' built-in resources (kubectl api-resources, 1.20 to 1.33). */
const BUILTIN_SHORT_NAMES = [
  "cs",
  "cm",
  "ep",
  "ev",
  "limits",
  "ns",
  "no",
  "pvc",
  "pv",
  "po",
  "rc",
  "quota",
  "sa",
  "svc",
  "crd",
  "crds",
  "deploy",
  "ds",
  "rs",
  "sts",
  "hpa",
  "cj",
  "csr",
  "ing",
  "netpol",
  "pdb",
  "psp",
  "pc",
  "sc",
  "ingclass",
  "vac",
];

describe("crds/ is generated from the schemas", () => {
  const files = renderCrdFiles();

  it.each(files.map((f) => [f.path, f.content] as const))("%s is up to date", (path, content) => {
    const full = join(ROOT, path);
    expect(existsSync(full), `${path} is missing: run npm run gen:crds`).toBe(true);
    expect(readFileSync(full, "utf8") === content, `${path} is stale: run npm run gen:crds`).toBe(true);
  });

  it("has no generated file that no kind produces any more", () => {
    const wanted = new Set(files.map((f) => f.path));
    for (const dir of CRD_DIRS) {
      const extra = readdirSync(join(ROOT, dir)).filter((n) => GENERATED_FILE.test(n) && !wanted.has(`${dir}/${n}`));
      expect(extra, `stale files in ${dir}: run npm run gen:crds`).toEqual([]);
    }
  });

  it("writes the chart's copy byte for byte like crds/", () => {
    for (const f of files.filter((x) => x.path.startsWith("crds/"))) {
      const chartCopy = files.find((x) => x.path === `charts/writ/${f.path}`);
      expect(chartCopy?.content).toBe(f.content);
    }
  });

  it("renders deterministically and parses back to the same objects", () => {
    expect(renderCrdFiles()).toEqual(files);
    const parsed = files.filter((f) => f.path.startsWith("crds/")).map((f) => parse(f.content) as unknown);
    expect(parsed).toEqual(JSON.parse(JSON.stringify(writCrds())));
  });
});

/** Every schema node with its path. */
function* nodes(schema: StructuralSchema, path = ""): Generator<[string, StructuralSchema]> {
  yield [path, schema];
  for (const [name, sub] of Object.entries(schema.properties ?? {})) yield* nodes(sub, `${path}.${name}`);
  if (schema.items) yield* nodes(schema.items, `${path}[]`);
  if (schema.additionalProperties) yield* nodes(schema.additionalProperties, `${path}{}`);
}

const FORBIDDEN = [
  "$ref",
  "$defs",
  "$schema",
  "$id",
  "$comment",
  "if",
  "then",
  "else",
  "oneOf",
  "allOf",
  "discriminator",
  "const",
  "uniqueItems",
  "title",
  "examples",
  "patternProperties",
  "prefixItems",
];

describe.each(writCrds().map((c) => [c.spec.names.kind, c] as const))("the %s CRD", (kind, crd) => {
  const version = crd.spec.versions[0]!;
  const root = version.schema.openAPIV3Schema;

  it("is namespaced, writ.dev/v1alpha1, served and stored, with the status subresource", () => {
    expect(crd.spec.group).toBe("writ.dev");
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } });
    expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.writ.dev`);
  });

  it("is in the writ category, with short names that no built-in resource uses", () => {
    expect(crd.spec.names.categories).toEqual(["writ"]);
    expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
    for (const s of crd.spec.names.shortNames) expect(BUILTIN_SHORT_NAMES).not.toContain(s);
    expect(crd.spec.names.listKind).toBe(`${kind}List`);
  });

  it("prints Ready, Phase, Reason, Agent and Age, and the Message (with more) under -o wide", () => {
    const cols = version.additionalPrinterColumns;
    const shown = cols.filter((c) => !c.priority).map((c) => c.name);
    expect(shown).toEqual(expect.arrayContaining(["Ready", "Phase", "Reason", "Agent", "Age"]));
    expect(cols.find((c) => c.name === "Reason")?.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].reason');
    expect(cols.find((c) => c.name === "Message")).toMatchObject({ jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 });
    expect(cols.filter((c) => c.priority === 1).length).toBeGreaterThan(0);
    expect(cols.find((c) => c.name === "Ready")?.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].status');
    for (const c of cols) expect(c.description.length).toBeGreaterThan(0);
  });

  it("describes every field", () => {
    const undescribed = [...nodes(root)].filter(([path, n]) => path !== ".metadata" && !n.description?.trim()).map(([p]) => p || "(root)");
    expect(undescribed).toEqual([]);
  });

  it("uses only structural keywords", () => {
    for (const [path, n] of nodes(root)) {
      for (const k of FORBIDDEN) expect(Object.keys(n), `${path} has ${k}`).not.toContain(k);
      if (!n["x-kubernetes-preserve-unknown-fields"]) expect(n.type, `${path} has no type`).toBeDefined();
      if (n.properties) expect(n.additionalProperties, `${path}: additionalProperties beside properties`).toBeUndefined();
      if (n.type === "array") expect(n.items, `${path}: an array without items`).toBeDefined();
      if (n.not) expect(Object.keys(n.not)).toEqual(["required"]);
      // anyOf only as value validation: alternatives of required members, each declared in properties.
      for (const alt of n.anyOf ?? []) {
        expect(Object.keys(alt), `${path}: anyOf`).toEqual(["required"]);
        for (const r of alt.required) expect(Object.keys(n.properties ?? {}), `${path}: anyOf requires ${r}`).toContain(r);
      }
      if (n.format) expect(["date-time"]).toContain(n.format);
      for (const v of n.enum ?? []) {
        const t = typeof v === "number" ? (Number.isInteger(v) && n.type === "integer" ? "integer" : "number") : typeof v;
        expect(t, `${path}: enum value ${JSON.stringify(v)}`).toBe(n.type);
      }
    }
  });

  it("has spec and status, and conditions of the metav1.Condition shape", () => {
    expect(root.required).toEqual(["spec"]);
    const status = root.properties?.status;
    const conditions = status?.properties?.conditions;
    expect(Object.keys(conditions?.items?.properties ?? {})).toEqual(
      expect.arrayContaining(["type", "status", "reason", "message", "lastTransitionTime", "observedGeneration"]),
    );
    expect(conditions?.["x-kubernetes-list-type"]).toBe("map");
    expect(conditions?.["x-kubernetes-list-map-keys"]).toEqual(["type"]);
    expect(status?.properties?.observedGeneration?.type).toBe("integer");
    expect(status?.properties?.phase?.enum).toContain("Pending");
  });
});

describe("spec fields", () => {
  const [delegation, agreement, subscription] = writCrds().map((c) => c.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!);

  it("Delegation: the delegation record, its status named state (default active, optional)", () => {
    const props = delegation!.properties!;
    expect(props.status).toBeUndefined();
    expect(props.state).toMatchObject({ type: "string", default: "active", enum: ["active", "suspended", "revoked", "expired"] });
    // Either the record (its required members) or the mandate form (mandate and agent).
    expect(delegation!.required).toBeUndefined();
    const [record, mandate] = delegation!.anyOf ?? [];
    expect(record?.required).not.toContain("state");
    expect(record?.required).toEqual(expect.arrayContaining(["delegation_id", "principal", "agent", "scope", "expires_at"]));
    expect(mandate?.required).toEqual(["mandate", "agent"]);
    expect(props.mandate?.required).toEqual(["sdJwt"]);
    expect(props.scope?.properties?.maximum_amount).toMatchObject({ type: "number", minimum: 0 });
    expect(props.conditions?.items?.properties?.type?.enum).toEqual([
      "time_window",
      "max_risk_score",
      "merchant_allowlist",
      "business_hours_only",
      "principal_present",
    ]);
    expect(props.principal?.properties?.public_key?.not).toEqual({ required: ["d"] });
    expect(props.agent?.["x-kubernetes-preserve-unknown-fields"]).toBe(true);
  });

  it("IntentAgreement: the agreement record plus delegationRef, its status named state (required)", () => {
    const props = agreement!.properties!;
    expect(Object.keys(props)[0]).toBe("delegationRef");
    expect(props.delegationRef?.required).toEqual(["name"]);
    expect(props.status).toBeUndefined();
    expect(agreement!.required).toEqual(expect.arrayContaining(["delegationRef", "state", "agreement_id", "mandates"]));
    const ack = props.mandates?.items?.properties?.required_acknowledgements;
    expect(ack?.["x-kubernetes-list-type"]).toBe("set");
    expect(props.revocation?.properties?.svc_revocation).toMatchObject({ type: "integer", enum: [1] });
    expect(props.events?.items?.properties?.detail?.["x-kubernetes-preserve-unknown-fields"]).toBe(true);
  });

  it("Subscription: agentId and webhookUrl, both required", () => {
    expect(Object.keys(subscription!.properties!)).toEqual(["agentId", "webhookUrl"]);
    expect(subscription!.required).toEqual(["agentId", "webhookUrl"]);
  });
});
