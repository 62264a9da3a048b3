/**
 * The CustomResourceDefinitions of Writ's kinds (apiextensions.k8s.io/v1, Kubernetes 1.20+):
 * namespaced, one version (`v1alpha1`, served and stored), the status subresource, short
 * names, the `writ` category and printer columns. Pure and deterministic: the same schemas
 * always give the same objects, so `crds/` can be checked for staleness.
 */
import { toStructural } from "./structural.js";
import { WRIT_CATEGORY, WRIT_GROUP, WRIT_KINDS, WRIT_VERSION, type WritKind } from "./kinds.js";
import type { CustomResourceDefinition, StructuralSchema } from "./types.js";

/** The root schema of a resource: apiVersion, kind, metadata, spec, status. */
function rootSchema(k: WritKind): StructuralSchema {
  return {
    type: "object",
    description: k.description,
    properties: {
      apiVersion: {
        type: "string",
        description: `Versioned schema of this representation: ${WRIT_GROUP}/${WRIT_VERSION}.`,
      },
      kind: { type: "string", description: `Kind of this resource: ${k.kind}.` },
      // Kubernetes allows nothing but the type here: metadata is described by the API server itself.
      metadata: { type: "object" },
      spec: k.structuralSpec ? k.structuralSpec(toStructural(k.spec())) : toStructural(k.spec()),
      status: k.status,
    },
    required: ["spec"],
  };
}

/** The CRD of one kind. */
export function crdFor(k: WritKind): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${k.plural}.${WRIT_GROUP}`, labels: { "app.kubernetes.io/part-of": "writ" } },
    spec: {
      group: WRIT_GROUP,
      scope: "Namespaced",
      names: {
        kind: k.kind,
        listKind: `${k.kind}List`,
        plural: k.plural,
        singular: k.singular,
        shortNames: [...k.shortNames],
        categories: [WRIT_CATEGORY],
      },
      versions: [
        {
          name: WRIT_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: rootSchema(k) },
          subresources: { status: {} },
          additionalPrinterColumns: k.columns.map((c) => ({ ...c })),
        },
      ],
    },
  };
}

/** Every Writ CRD: Delegation, IntentAgreement, Subscription. */
export function writCrds(): CustomResourceDefinition[] {
  return WRIT_KINDS.map(crdFor);
}
