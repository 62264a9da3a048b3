/** Writ's own resources (group writ.dev) as references in the Kubernetes API. */
import { WRIT_GROUP, WRIT_VERSION } from "../../core/crd/index.js";
import type { ResourceRef } from "./objects.js";

/** Resource reference of `plural` in `namespace` (every namespace when omitted). */
export function writRef(plural: "delegations" | "intentagreements" | "subscriptions", namespace?: string): ResourceRef {
  return namespace === undefined ? { group: WRIT_GROUP, version: WRIT_VERSION, plural } : { group: WRIT_GROUP, version: WRIT_VERSION, plural, namespace };
}
