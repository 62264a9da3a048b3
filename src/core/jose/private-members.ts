/**
 * Private key material inside a declaration: every JSON object that is a JWK (it has a string
 * `kty`) and carries a private member (`d`, or an RSA/oct secret). Pure.
 *
 * A public key with its private part is refused wherever Writ reads a declaration (the
 * admission webhook, the controller, the API), with a message that names the member's path:
 * the structural CRD schema's `not: {required: [d]}` can only say "must not validate the
 * schema (not)".
 */
import { PRIVATE_JWK_MEMBERS } from "./jwk.js";

/** One private member found: the path of the JWK (`principal.public_key`) and the member. */
export interface PrivateMember {
  /** Dotted path of the JWK object from the root given (`[i]` for array items). */
  path: string;
  member: string;
}

const MAX_DEPTH = 64;

/** Every private member of a JWK anywhere in `value` (`root` prefixes the paths). */
export function findPrivateJwkMembers(value: unknown, root = ""): PrivateMember[] {
  const out: PrivateMember[] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (depth > MAX_DEPTH || typeof v !== "object" || v === null) return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${path}[${i}]`, depth + 1));
      return;
    }
    const obj = v as Record<string, unknown>;
    if (typeof obj.kty === "string") for (const m of PRIVATE_JWK_MEMBERS) if (Object.hasOwn(obj, m)) out.push({ path, member: m });
    for (const [k, child] of Object.entries(obj)) walk(child, path === "" ? k : `${path}.${k}`, depth + 1);
  };
  walk(value, root, 0);
  return out;
}

/** The message for a private member found at `p`. */
export function privateMemberMessage(p: PrivateMember): string {
  return `${p.path}: a public key must not carry its private member "${p.member}": remove it, and treat that private key as exposed (it was sent in a declaration)`;
}
