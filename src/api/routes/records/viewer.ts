/**
 * Who reads a record through the read API (docs/records.md): an organization (an API key with
 * `registry:read`) or a principal (a portal session, `Authorization: Bearer bps_...`), and
 * which records each may see.
 *
 * Rules:
 * - an organization sees a delegation or an agreement stored for it (its tenant), or, stored
 *   without one, whose agent it operates; it also sees an agreement that names it as a
 *   payment-side party (an acknowledgement of a current mandate hash by its org id, signed by
 *   a live key it registered: src/store/ack-keys.ts);
 * - a principal sees the records whose agent is registered with its principal id;
 * - anyone else gets the same 404 as for an unknown id, so existence is not revealed.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { type RecordOwners, ownsRecord } from "../../../store/index.js";
import { keyCredential } from "../../plugins/auth.js";
import { bearerSessionToken } from "../portal/credentials.js";
import { requireSession } from "../portal/sessions.js";

/** Who reads. */
export type Viewer = { kind: "org"; orgId: string } | { kind: "principal"; principalId: string };

/** The reader of `request`: a portal session, or an organization key with `registry:read` (401/403 otherwise). */
export async function viewerOf(app: FastifyInstance, request: FastifyRequest): Promise<Viewer> {
  if (bearerSessionToken(request.headers.authorization) !== null) return { kind: "principal", principalId: (await requireSession(app, request)).principalId };
  await app.requireScope("registry:read")(request);
  return { kind: "org", orgId: keyCredential(request).org_id };
}

/** True when `viewer` may see a record of `owners` (`parties`: the payment-side parties of an agreement). */
export function maySee(viewer: Viewer, owners: RecordOwners, parties: ReadonlySet<string> = new Set()): boolean {
  if (viewer.kind === "principal") return owners.principalId !== null && owners.principalId === viewer.principalId;
  return ownsRecord(viewer.orgId, owners.orgId, owners.operatorOrgId) || parties.has(viewer.orgId);
}
