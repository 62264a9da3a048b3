/**
 * The Kubernetes shapes the CRD generator produces: a structural OpenAPI v3 schema
 * (apiextensions.k8s.io/v1 `JSONSchemaProps`, the subset Writ uses) and the
 * CustomResourceDefinition around it. Plain data, ready for YAML or JSON output.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A JSON Schema node as found in `src/core/schemas` (after `inlinedSchemaFor`). */
export type SchemaNode = Record<string, unknown>;

/** One node of a structural schema (apiextensions.k8s.io/v1 JSONSchemaProps, the subset used). */
export interface StructuralSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  properties?: Record<string, StructuralSchema>;
  required?: string[];
  items?: StructuralSchema;
  additionalProperties?: StructuralSchema;
  enum?: Json[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: Json;
  /** Value validation only (no types, descriptions or defaults inside). */
  not?: { required: string[] };
  /** Value validation only: at least one of these member sets is present. */
  anyOf?: Array<{ required: string[] }>;
  "x-kubernetes-preserve-unknown-fields"?: true;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
}

/** One `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description: string;
  /** 0: shown by `kubectl get`; 1: only with `-o wide`. */
  priority?: 0 | 1;
  format?: string;
}

/** A CustomResourceDefinition (apiextensions.k8s.io/v1), as written to `crds/`. */
export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: StructuralSchema };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }>;
  };
}
