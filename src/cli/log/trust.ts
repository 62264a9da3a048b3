/**
 * Which key a tree head must verify with: the trust model of `writ log verify` and `writ log
 * monitor`.
 *
 * - Pinned key (`--key-file log.public.jwk.json`): the head must be signed by exactly that
 *   key. Nothing the server or a bundle says can change it. The strongest choice.
 * - Pinned kid (`--kid sha256:...`): the key list must hold a key with that thumbprint and the
 *   head must name it. As strong as the pinned key (the kid is the key's hash).
 * - Neither: the key whose kid the head's signature names is taken from the key list (the
 *   server's `/.well-known/svc-keys.json`, or the copy inside a bundle). This trusts the server
 *   (or whoever wrote the bundle) to publish the right key: it proves the head is the one that
 *   key signed, not that the key is the log's.
 *
 * Every kid is computed from the key (RFC 7638 thumbprint); a list entry whose stated `kid`
 * differs from its thumbprint is refused.
 */
import { decodeJwsHeader, keyId, parseJwsObject, parsePublicJwk, type PublicJwk } from "../../core/jose/index.js";
import { isHashString } from "../../core/canonical/index.js";
import { CliError, usageError } from "../errors.js";
import { readPublicKeyFile } from "../files.js";

/** What the user pinned. */
export type KeyPin = { kind: "key"; key: PublicJwk; source: string } | { kind: "kid"; kid: string } | { kind: "none" };

/** The chosen key and how it was chosen (for the step report). */
export interface ChosenKey {
  key: PublicJwk;
  kid: string;
  how: string;
  pinned: boolean;
}

/** Reads `--key-file` / `--kid` (at most one). */
export function keyPinFlags(keyFile: string | undefined, kid: string | undefined): KeyPin {
  if (keyFile !== undefined && kid !== undefined) throw usageError("pass --key-file or --kid, not both");
  if (keyFile !== undefined) return { kind: "key", key: readPublicKeyFile(keyFile), source: keyFile };
  if (kid !== undefined) {
    if (!isHashString(kid)) throw usageError(`--kid must be sha256: followed by 64 lowercase hex digits, not ${JSON.stringify(kid)}`);
    return { kind: "kid", kid };
  }
  return { kind: "none" };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The usable keys of a key list `{keys: [{public_key}]}` by computed kid; throws CHECK_FAILED on a lying entry. */
export function keysByKid(list: unknown): Map<string, PublicJwk> {
  const out = new Map<string, PublicJwk>();
  if (!isObj(list) || !Array.isArray(list.keys)) throw new CliError("CHECK_FAILED", "the key list is not {keys: [...]}");
  list.keys.forEach((entry: unknown, i) => {
    if (!isObj(entry)) return;
    let key: PublicJwk;
    try {
      key = parsePublicJwk(entry.public_key);
    } catch {
      return; // not a key Writ can use; it cannot sign a head either
    }
    const kid = keyId(key);
    const stated = isObj(entry.public_key) ? entry.public_key.kid : undefined;
    if (stated !== undefined && stated !== kid) {
      throw new CliError("CHECK_FAILED", `key list entry ${i} states kid ${String(stated)} but its thumbprint is ${kid}`);
    }
    out.set(kid, key);
  });
  return out;
}

/** The kid named in a head's signature header, or undefined. Throws CHECK_FAILED when the signature is no JWS. */
export function signatureKid(signature: unknown): string | undefined {
  try {
    const kid = decodeJwsHeader(parseJwsObject(signature)).kid;
    return typeof kid === "string" ? kid : undefined;
  } catch (e) {
    throw new CliError("CHECK_FAILED", `the tree head's signature is not a valid JWS: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Chooses the key a head signed with `signature` must verify with. `listSource` says where the
 * key list came from ("the server's key list", "the bundle's key list"). Throws CHECK_FAILED.
 */
export function chooseKey(signature: unknown, list: unknown, pin: KeyPin, listSource: string): ChosenKey {
  const named = signatureKid(signature);
  if (pin.kind === "key") {
    const kid = keyId(pin.key);
    if (named !== undefined && named !== kid)
      throw new CliError("CHECK_FAILED", `the tree head is signed by kid ${named}, not by the pinned key ${kid} (--key-file ${pin.source})`);
    return { key: pin.key, kid, how: `pinned by --key-file ${pin.source}`, pinned: true };
  }
  const keys = keysByKid(list);
  if (pin.kind === "kid") {
    const key = keys.get(pin.kid);
    if (key === undefined) throw new CliError("CHECK_FAILED", `${listSource} holds no key with the pinned kid ${pin.kid}`);
    if (named !== undefined && named !== pin.kid)
      throw new CliError("CHECK_FAILED", `the tree head is signed by kid ${named}, not by the pinned kid ${pin.kid}`);
    return { key, kid: pin.kid, how: `pinned by --kid, key from ${listSource}`, pinned: true };
  }
  if (named === undefined) throw new CliError("CHECK_FAILED", "the tree head's signature names no kid; pin the log key with --key-file");
  const key = keys.get(named);
  if (key === undefined) throw new CliError("CHECK_FAILED", `${listSource} holds no key with kid ${named}, the key that signed the tree head`);
  return { key, kid: named, how: `from ${listSource} (unpinned: this trusts that list; pin with --kid or --key-file)`, pinned: false };
}
