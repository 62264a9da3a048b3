/**
 * The typed error of the Kubernetes client: an HTTP failure of the API server (its `Status`
 * object's `reason` mapped to a stable `code`) or a transport failure. Branch on `code`, never on
 * the message.
 */

/** Stable codes of `KubeApiError`. */
export type KubeErrorCode =
  /** 409 with reason Conflict: the resourceVersion sent is stale (optimistic concurrency). */
  | "CONFLICT"
  /** 409 with reason AlreadyExists. */
  | "ALREADY_EXISTS"
  | "NOT_FOUND"
  /** 410: the resourceVersion asked for is too old (relist). */
  | "GONE"
  /** 422 or 400: the request was refused as invalid. */
  | "INVALID"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "TOO_MANY_REQUESTS"
  /** 5xx. */
  | "SERVER_ERROR"
  /** The API server could not be reached or did not answer in time. */
  | "UNAVAILABLE"
  /** Any other status, or a body that is not JSON. */
  | "BAD_RESPONSE";

/** A failed Kubernetes API call. `status` is the HTTP status (0 for a transport failure). */
export class KubeApiError extends Error {
  override readonly name = "KubeApiError";
  constructor(
    readonly code: KubeErrorCode,
    readonly status: number,
    message: string,
    /** The Status object's `reason` (e.g. `Conflict`, `NotFound`), when the server sent one. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** The code of an HTTP failure, from its status and the Status object's reason. */
export function codeForStatus(status: number, reason: string | undefined): KubeErrorCode {
  if (status === 409) return reason === "AlreadyExists" ? "ALREADY_EXISTS" : "CONFLICT";
  if (status === 404) return "NOT_FOUND";
  if (status === 410) return "GONE";
  if (status === 422 || status === 400) return "INVALID";
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "FORBIDDEN";
  if (status === 429) return "TOO_MANY_REQUESTS";
  if (status >= 500) return "SERVER_ERROR";
  return "BAD_RESPONSE";
}

/** True when `err` is a KubeApiError with `code`. */
export function isKubeError(err: unknown, code: KubeErrorCode): boolean {
  return err instanceof KubeApiError && err.code === code;
}

/** The HTTP status carried by an error of client-node's Watch (`statusCode`), or of a watch ERROR event (`code`). */
export function statusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { statusCode?: unknown; code?: unknown; status?: unknown };
  for (const v of [e.statusCode, e.status, e.code]) if (typeof v === "number") return v;
  return undefined;
}
