/**
 * How the registry appends to the transparency log from a route: the log signing key (503
 * `SVC_LOG_SIGNING_SEED is not set` when unset, 500 when it does not load) and the append
 * options (the head's time from the app clock, the checkpoint origin when WRIT_LOG_ORIGIN is a
 * valid one). Used by agent registration and by fraud-incident reports.
 */
import type { FastifyInstance } from "fastify";
import type { Signer } from "../../../core/jose/index.js";
import type { LogAppendOptions } from "../../../store/index.js";
import { ApiError, settingNotSet } from "../../errors.js";

/** The log signing key, or the 503/500 for an unset or unusable SVC_LOG_SIGNING_SEED. */
export function logSignerOf(app: FastifyInstance): Signer {
  const s = app.settings.logSigner;
  if (s.status === "unset") throw settingNotSet("SVC_LOG_SIGNING_SEED");
  if (s.status === "invalid" || app.logSigner === null) throw new ApiError("KEY_LOAD_FAILED", "SVC_LOG_SIGNING_SEED failed to load");
  return app.logSigner;
}

/** Options of a log append made by the registry at `now`. */
export function logAppendOptions(app: FastifyInstance, now: Date): LogAppendOptions {
  const origin = app.settings.checkpointOrigin;
  return origin !== null ? { now, origin } : { now };
}
