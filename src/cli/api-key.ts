/**
 * The registry API key of `writ verify` and `writ inquire`: from `--api-key-file` (first line)
 * or the `WRIT_API_KEY` environment variable, never from an argument. Sending it over plain
 * http to a host other than loopback is warned about (in-cluster service URLs are allowed).
 */
import { usageError } from "./errors.js";
import { readSecretFile } from "./files.js";
import { isLoopback } from "./flags.js";
import type { CliIo } from "./io.js";

/** Environment variable holding the API key. */
export const API_KEY_ENV = "WRIT_API_KEY";

/** The API key to send to `server`. */
export function apiKey(io: CliIo, file: string | undefined, server: URL): string {
  const key = file !== undefined ? readSecretFile(file, "api-key-file") : io.env[API_KEY_ENV]?.trim();
  if (key === undefined || key === "") throw usageError(`set ${API_KEY_ENV} or pass --api-key-file <file> (an organization API key)`);
  if (server.protocol === "http:" && !isLoopback(server)) io.stderr(`warning: sending the API key over plain http to ${server.host}\n`);
  return key;
}
