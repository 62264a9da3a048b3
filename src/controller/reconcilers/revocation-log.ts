/**
 * How the controller's revocations are logged: through the one revocation path
 * (src/store/revocation/record.ts) with the controller's log signer and checkpoint origin, and
 * how an Event says where the entry went. Bodies carry `source: "kubernetes"` and the resource.
 */
import type { RevocationLogging } from "../../store/index.js";
import type { ReconcileContext } from "./context.js";

/** The controller's logging of a revocation at `at`. */
export function controllerLogging(ctx: ReconcileContext, at: Date): RevocationLogging {
  return { signer: ctx.logSigner ?? null, logOptions: ctx.logOrigin !== undefined ? { now: at, origin: ctx.logOrigin } : { now: at } };
}

/** How an Event says where a revocation was logged. */
export function loggedText(sequence: number | null | undefined): string {
  return sequence !== null && sequence !== undefined ? `transparency log entry ${sequence}` : "not logged: SVC_LOG_SIGNING_SEED is unset";
}
