/**
 * How agreement records check their signatures: `verifyJws` from the jose layer (which also
 * refuses non-canonical base64url), as a boolean.
 */
import { verifyJws, type PublicJwk } from "../jose/index.js";

/**
 * Verifies a record's flattened JWS with `key`, protected `typ` `typ` and exactly `payload`.
 * Returns false (never throws) for anything that does not verify.
 */
export async function verifiesOver(jws: unknown, key: PublicJwk, typ: string, payload: Uint8Array): Promise<boolean> {
  try {
    await verifyJws(jws, key, { typ, payload });
    return true;
  } catch {
    return false;
  }
}
