/**
 * Tells a "the database cannot be reached" failure from every other database error, so the
 * API answers 503 `{error: "database unavailable"}` for the former, 400 for a value Postgres
 * refused (a data exception, SQLSTATE class 22), and 500 for the rest. A group commit retries
 * its rows apart on any failure but the first kind (./isolated-batch.ts).
 *
 * Classification: network error codes of node (ECONNREFUSED, ...), SQLSTATE class 08
 * (connection exception; also a cluster URL with no host of the wanted kind, ./cluster.ts),
 * 57P01–57P03 (admin shutdown, crash shutdown, cannot connect now), 53300 (too many
 * connections) and 25006 (read-only transaction: the server a connection reached turned
 * standby in a failover; Writ never writes through a read-only session on purpose) and 40001
 * (serialization failure: Writ runs no SERIALIZABLE or REPEATABLE READ transaction, so it only
 * comes from a standby cancelling a read of DATABASE_READ_URL that conflicts with replay, and
 * the same read a moment later succeeds). node-postgres raises two failures without any code: the pool's
 * connect timeout and a connection that ends mid-query; those are recognised by their exact
 * library-written texts, the only place Writ looks at an error message, besides one of Citus:
 * a worker the coordinator lost during a transaction is reported without a code (XX000,
 * "failure on connection marked as essential: host:port"), recognised by its prefix.
 */

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "25006", "40001"]);
const PG_LIBRARY_TEXTS = [
  "timeout exceeded when trying to connect",
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "Client has encountered a connection error and is not queryable",
];

/**
 * True when Postgres refused text it was given: a NUL character (22021, which Postgres text
 * cannot hold) or a character with no equivalent in the server encoding (22P05). Only request
 * input carries such text, so the API answers 400, never 500.
 */
export function isUnstorableText(err: unknown): boolean {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === "22021" || code === "22P05";
}

/**
 * True for any data exception (SQLSTATE class 22: a value out of range, malformed, too long,
 * or text as in `isUnstorableText`): Postgres refused a value it was given, which only request
 * input carries, so the API answers 400, never 500. A group commit that fails so retries its
 * rows apart (./isolated-batch.ts), and only the request whose value it was gets the 400.
 */
export function isDataException(err: unknown): boolean {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code);
}

/** True when `err` means Postgres could not be reached (or dropped the connection). */
export function isDbUnavailable(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof e.code === "string") {
    if (NETWORK_CODES.has(e.code) || SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  // node's AggregateError (e.g. ECONNREFUSED on both ::1 and 127.0.0.1) carries the causes.
  if (Array.isArray(e.errors) && e.errors.some(isDbUnavailable)) return true;
  return typeof e.message === "string" && (PG_LIBRARY_TEXTS.includes(e.message) || (e.code === "XX000" && e.message.startsWith(CITUS_LOST_WORKER)));
}

/** Citus's message when a worker connection of the transaction failed (code XX000). */
const CITUS_LOST_WORKER = "failure on connection marked as essential: ";
