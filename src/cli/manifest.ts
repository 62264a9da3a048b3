/**
 * Kubernetes manifests of Writ's custom resources (`writ.dev/v1alpha1`) as the CLI reads and
 * writes them: `{apiVersion, kind, metadata: {name, namespace?, labels?, annotations?}, spec}`.
 *
 * Reading keeps only what belongs in Git: name, namespace, labels and annotations of
 * `metadata` (a `kubectl get -o yaml` copy loses its uid, resourceVersion, managedFields and
 * `.status`). Names are Kubernetes object names (RFC 1123 subdomains); one derived from a
 * record id is lowercased with every other character turned into `-`.
 */
import { WRIT_GROUP, WRIT_VERSION } from "../core/crd/index.js";
import { CliError, usageError } from "./errors.js";

/** apiVersion of every Writ resource. */
export const WRIT_API_VERSION = `${WRIT_GROUP}/${WRIT_VERSION}`;

/** The metadata the CLI keeps. */
export interface ManifestMetadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A Writ custom resource manifest. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: ManifestMetadata;
  spec: Record<string, unknown>;
}

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** True for a valid object name (RFC 1123 subdomain, at most 253 characters). */
export function isObjectName(name: string): boolean {
  return name.length <= 253 && NAME_RE.test(name);
}

/** A `--name` or `--namespace` value, checked. */
export function nameFlag(value: string, flag: string): string {
  const ok = flag === "namespace" ? value.length <= 63 && LABEL_NAME_RE.test(value) : isObjectName(value);
  if (!ok) throw usageError(`--${flag} ${JSON.stringify(value)} is not a Kubernetes name (lowercase letters, digits and -)`);
  return value;
}

/** An object name derived from a record id (`agr_Acme_1` -> `agr-acme-1`). */
export function nameFromId(id: string): string {
  const name = id
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/(^|\.)[-.]+/g, "$1")
    .replace(/[-.]+($|\.)/g, "$1")
    .slice(0, 253)
    .replace(/[-.]+$/, "");
  if (!isObjectName(name)) throw usageError(`cannot derive a Kubernetes name from ${JSON.stringify(id)}; pass --name`);
  return name;
}

function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isObj(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (typeof val === "string") out[k] = val;
  return out;
}

/**
 * Checks that `doc` is a manifest of `kind` and returns its kept metadata and spec. Throws
 * INPUT_INVALID naming the file.
 */
export function readManifest(doc: unknown, kind: string, source: string): { metadata: ManifestMetadata; spec: Record<string, unknown> } {
  if (!isObj(doc)) throw new CliError("INPUT_INVALID", `${source} is not a manifest (a YAML or JSON object)`);
  if (doc.kind !== kind) {
    throw new CliError("INPUT_INVALID", `${source} has kind ${JSON.stringify(doc.kind ?? null)}; expected kind ${kind}`);
  }
  if (doc.apiVersion !== WRIT_API_VERSION) {
    throw new CliError("INPUT_INVALID", `${source} has apiVersion ${JSON.stringify(doc.apiVersion)}; this writ reads ${WRIT_API_VERSION}`);
  }
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  if (typeof meta.name !== "string" || !isObjectName(meta.name)) {
    throw new CliError("INPUT_INVALID", `${source} has no valid metadata.name`);
  }
  const metadata: ManifestMetadata = { name: meta.name };
  if (typeof meta.namespace === "string" && meta.namespace !== "") metadata.namespace = meta.namespace;
  const labels = stringMap(meta.labels);
  if (labels && Object.keys(labels).length > 0) metadata.labels = labels;
  const annotations = stringMap(meta.annotations);
  if (annotations) delete annotations["kubectl.kubernetes.io/last-applied-configuration"];
  if (annotations && Object.keys(annotations).length > 0) metadata.annotations = annotations;
  if (!isObj(doc.spec)) throw new CliError("INPUT_INVALID", `${source} has no spec object`);
  return { metadata, spec: doc.spec };
}

/** A manifest of `kind`. */
export function manifestOf(kind: string, metadata: ManifestMetadata, spec: Record<string, unknown>): Manifest {
  return { apiVersion: WRIT_API_VERSION, kind, metadata, spec };
}

/** Metadata from `--name`/`--namespace` flags, the previous metadata, or a name derived from `id`. */
export function metadataFrom(flags: { name?: string; namespace?: string }, id: string, previous?: ManifestMetadata): ManifestMetadata {
  const name = flags.name !== undefined ? nameFlag(flags.name, "name") : (previous?.name ?? nameFromId(id));
  const out: ManifestMetadata = { ...previous, name };
  if (flags.namespace !== undefined) out.namespace = nameFlag(flags.namespace, "namespace");
  return out;
}
