// @ts-check
/**
 * The one-way dependencies of src/ (docs: CONTRIBUTING.md "Layers"), as the ESLint rule `writ/layers`.
 *
 * Every relative `import`/`export ... from`, dynamic `import("...")` and `import("...")` type
 * of a file under src/ is resolved to the top folder of src/ it lands in (its layer) and must
 * be one of the layers LAYERS allows for the file's own layer; imports within a layer are free.
 * An import that leaves src/ (test/, hack/) and a file or target outside every listed layer are
 * reported too: a new top folder needs a row here. Two more checks on packages:
 * - core imports only the packages CORE_PACKAGES lists (none does I/O);
 * - only store imports `pg` values (a client or pool to speak SQL with). Type-only imports
 *   (`import type { Pool, PoolClient } from "pg"`) are fine above core: they let a layer hold a
 *   pool or a transaction and hand it to store functions without writing SQL itself.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The layers table: what each top folder of src/ is, and the other top folders it may import. */
const CORE = ["core"];
/** Small utilities with no domain of their own: above core, below everything else. */
const LEAF = ["http", "metrics", "manifests"];
/** What a layer between the store and the entry points may import. */
const MIDDLE = [...CORE, ...LEAF, "store"];
/** Everything below the entry points. */
const BELOW_ENTRY = [...MIDDLE, "webhooks", "fx", "retention", "sources", "verify"];

export const LAYERS = {
  // The domain: formats, canonical JSON, signatures, evaluation, money, the log's Merkle tree. Pure: no I/O.
  core: { may: [] },
  // Outbound HTTP: the one client for destinations chosen by input (policy, timeouts, size cap).
  http: { may: CORE },
  // One metric per name on a prom-client registry.
  metrics: { may: CORE },
  // Kubernetes-style YAML manifests: parse and print.
  manifests: { may: CORE },
  // Postgres: pool, migrations, one module per aggregate. The only layer that speaks SQL.
  store: { may: CORE },
  // Delivery of signed alerts from the outbox (the outbox itself is store's).
  webhooks: { may: MIDDLE },
  // Exchange rates: the public source and its stored copies.
  fx: { may: MIDDLE },
  // Background deletion of rows past their retention.
  retention: { may: MIDDLE },
  // Where declarations come from: the Kubernetes API (client, informers, namespace bindings)
  // and local manifest folders.
  sources: { may: MIDDLE },
  // The data plane's decision: caches, revocation index, spend. Its Kubernetes revocation
  // watch reads through sources.
  verify: { may: [...MIDDLE, "sources"] },
  // Entry point: the operator (`writ controller`). Never the API.
  controller: { may: BELOW_ENTRY },
  // Entry point: the HTTP API (`writ serve`). Never the controller.
  api: { may: BELOW_ENTRY },
  // Entry point: `writ dev`, one process wiring the API, the controller and local manifests.
  dev: { may: [...BELOW_ENTRY, "api", "controller"] },
  // The typed HTTP client of the API (types generated from /openapi.json): stands alone.
  client: { may: CORE },
  // Entry point: the `writ` command, which starts every other entry point.
  cli: { may: [...BELOW_ENTRY, "api", "controller", "dev", "client"] },
};

/** The packages core may import (exactly, or a path inside them); none does I/O. */
export const CORE_PACKAGES = [
  "node:crypto", // hashes and signatures
  "node:module", // createRequire, to load the CommonJS canonicalize
  "ajv",
  "ajv-formats",
  "canonicalize",
  "jose",
  "@sd-jwt/core", // SD-JWT parsing, disclosure digests and key binding (mandates); no I/O
  "@sd-jwt/crypto-nodejs", // its sha-256 hasher (node:crypto)
  "http-message-signatures", // RFC 9421 signature bases (core/httpsig); no I/O
  "structured-headers", // RFC 8941 structured fields (core/httpsig); no I/O
];

/** The layers that may import `pg` values. */
export const PG_VALUE_LAYERS = ["store"];
/** Files outside PG_VALUE_LAYERS that still import `pg` values, each with the reason (none today). */
export const PG_VALUE_EXCEPTIONS = {};

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = path.join(ROOT, "src");

/** The layer (top folder of src/) of an absolute path; null outside src/, "" directly in src/. */
function layerOf(file) {
  const rel = path.relative(SRC, file);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  return parts.length > 1 ? parts[0] : "";
}

const list = (layers) => (layers.length ? layers.join(", ") : "nothing outside its own folder");

/** A string literal's value, or undefined. */
function literal(node) {
  if (!node) return undefined;
  if (node.type === "Literal" && typeof node.value === "string") return node.value;
  if (node.type === "TemplateLiteral" && node.expressions.length === 0) return node.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

/** True when a declaration imports or re-exports types only. */
function typeOnly(node) {
  if (node.type === "ImportDeclaration") {
    if (node.importKind === "type") return true;
    return node.specifiers.length > 0 && node.specifiers.every((s) => s.type === "ImportSpecifier" && s.importKind === "type");
  }
  if (node.type === "ExportNamedDeclaration" || node.type === "ExportAllDeclaration") {
    if (node.exportKind === "type") return true;
    return node.type === "ExportNamedDeclaration" && node.specifiers.length > 0 && node.specifiers.every((s) => s.exportKind === "type");
  }
  return node.type === "TSImportType";
}

/** `spec` names package `pkg` or a path inside it. */
const inPackage = (spec, pkg) => spec === pkg || spec.startsWith(`${pkg}/`);

/** @type {import("eslint").Rule.RuleModule} */
const rule = {
  meta: {
    type: "problem",
    docs: { description: "Imports in src/ follow the layers table of hack/eslint/layers.js" },
    schema: [],
    messages: {
      layer:
        "src/{{from}} (layer {{from}}) may not import src/{{to}} (layer {{to}}) through '{{spec}}'; {{from}} may import {{allowed}} (table: hack/eslint/layers.js)",
      outside: "'{{spec}}' leaves src/: code in src/{{from}} imports only src/ and packages",
      unlisted: "{{what}} is in no layer of the table in hack/eslint/layers.js: add its top folder there",
      corePackage: "core (layer core) may not import '{{spec}}': core does no I/O and imports only the packages {{allowed}} (table: hack/eslint/layers.js)",
      pgValue: "only {{allowed}} speaks SQL: src/{{from}} (layer {{from}}) may import only types from '{{spec}}' (import type { Pool, PoolClient } ...)",
    },
  },
  create(context) {
    const file = context.filename;
    const from = layerOf(file);
    if (from === null) return {};
    const relFile = path.relative(ROOT, file).split(path.sep).join("/");
    if (!(from in LAYERS)) {
      return {
        Program(node) {
          context.report({ node, messageId: "unlisted", data: { what: `the file ${relFile}` } });
        },
      };
    }
    const allowed = LAYERS[from].may;

    /** Checks one import of `spec` by `node` (a declaration, import expression or import type). */
    function check(node, spec) {
      if (spec === undefined) return;
      if (spec.startsWith(".")) {
        const target = path.resolve(path.dirname(file), spec);
        const to = layerOf(target);
        if (to === null) return context.report({ node, messageId: "outside", data: { spec, from } });
        if (to === from) return;
        if (!(to in LAYERS)) return context.report({ node, messageId: "unlisted", data: { what: `'${spec}' (imported by ${relFile})` } });
        if (!allowed.includes(to)) context.report({ node, messageId: "layer", data: { from, to, spec, allowed: list(allowed) } });
        return;
      }
      if (from === "core" && !CORE_PACKAGES.some((p) => inPackage(spec, p))) {
        context.report({ node, messageId: "corePackage", data: { spec, allowed: CORE_PACKAGES.join(", ") } });
        return;
      }
      if (inPackage(spec, "pg") && !typeOnly(node) && !PG_VALUE_LAYERS.includes(from) && !(relFile in PG_VALUE_EXCEPTIONS)) {
        context.report({ node, messageId: "pgValue", data: { spec, from, allowed: PG_VALUE_LAYERS.map((l) => `src/${l}`).join(", ") } });
      }
    }

    return {
      ImportDeclaration: (node) => check(node, literal(node.source)),
      ExportNamedDeclaration: (node) => node.source && check(node, literal(node.source)),
      ExportAllDeclaration: (node) => check(node, literal(node.source)),
      ImportExpression: (node) => check(node, literal(node.source)),
      // `typeof import("../x.js")` (typescript-eslint: `source`, formerly `argument.literal`).
      TSImportType: (node) => check(node, literal(node.source ?? node.argument?.literal)),
    };
  },
};

/** The local plugin: `writ/layers`. */
export default { meta: { name: "writ" }, rules: { layers: rule } };
