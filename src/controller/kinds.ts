/**
 * What the controller manages: the names of its controllers, one per Writ kind (the
 * `controller` metric label and the work queue `name`; the kinds' resource references are
 * `writRef` of src/sources/kubernetes/writ-refs.ts), the finalizer and the annotation it puts
 * on resources it stored, and the shapes of the resources it reads.
 */
import { WRIT_GROUP, WRIT_VERSION } from "../core/crd/index.js";
import type { KubeObject } from "../sources/kubernetes/index.js";

/** The finalizer: deleting a resource revokes (deactivates) its record before it goes. */
export const REVOKE_FINALIZER = "writ.dev/revoke";
/**
 * The record id this resource stored (`delegation_id`, `agreement_id` or `subscription_id`):
 * set with the finalizer, it makes the id immutable (a new grant is a new resource) and tells
 * the finalizer what to revoke.
 */
export const RECORD_ID_ANNOTATION = "writ.dev/record-id";

/** The controllers, one per kind. */
export const CONTROLLER_NAMES = {
  delegation: "delegation",
  agreement: "intentagreement",
  subscription: "subscription",
} as const;

/** A controller name. */
export type ControllerName = (typeof CONTROLLER_NAMES)[keyof typeof CONTROLLER_NAMES];

/** apiVersion of Writ resources. */
export const WRIT_API_VERSION = `${WRIT_GROUP}/${WRIT_VERSION}`;

/** A Writ resource as the controller reads it (spec and status are checked, never trusted). */
export interface WritResource extends KubeObject {
  spec?: unknown;
  status?: Record<string, unknown>;
}
