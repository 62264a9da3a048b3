/**
 * Disclosure resolution of an SD-JWT (RFC 9901 §7.1, steps 2-5): the ONE implementation Writ
 * uses, both to verify a mandate and to show its claims (`writ mandate inspect` prints what this
 * returns). It reads the presented disclosures itself, from their encoded text, and never mutates
 * the signed payload. What it does, following the RFC:
 *
 * - `_sd_alg` (top level only) is absent or `sha-256`; anywhere deeper it is refused;
 * - every digest in an object's `_sd` that has a disclosure becomes the claim it discloses,
 *   `[salt, name, value]`, whose name is not `_sd`, `...` or `_sd_alg` and not already a claim of
 *   that object; every array element `{"...": digest}` (an object with that one member) that has
 *   a disclosure becomes its value, `[salt, value]`;
 * - recursively: a disclosed value may itself hold `_sd` arrays and `{"...": digest}` elements
 *   (a constraint that is a disclosed array element holding disclosed payees);
 * - every digest occurs once in the payload and the disclosed values together, and every
 *   presented disclosure is referenced exactly once (one presented twice, or one that no digest
 *   names: altered, from another token, or nested in a disclosure that is itself not presented).
 *
 * Digests without a disclosure, and Writ's rule for them:
 * - in an object's `_sd`: a decoy (RFC 9901 §4.2.5) or a claim the issuer let the holder leave
 *   out. Not a problem of resolution; the location is listed in `undisclosed`. A mandate's
 *   verification refuses the ones in objects where constraints live (./withheld-constraints.ts)
 *   and accepts the others as decoys;
 * - as an array element: WITHHELD, refused (DISCLOSURE_MISSING). An element of a mandate's arrays
 *   is a constraint or a member of one (a payee), which Writ maps as a whole, and an array decoy
 *   cannot be told from a withheld element. The location is named: `constraints[1] is withheld`,
 *   `constraints[0].allowed[1] is withheld` for one nested in a disclosed constraint.
 *
 * Pure (hashing only). Bounded: nesting deeper than MAX_DEPTH is refused, not walked.
 */
import { sha256 } from "../canonical/index.js";
import type { MandateProblem } from "./sd-jwt-problems.js";

/** The only `_sd_alg` supported. */
export const SD_ALG = "sha-256";
/** Deepest nesting walked; deeper is refused (a mandate is a few levels deep). */
export const MAX_DEPTH = 32;

/** A digest of the signed payload (or of a disclosed value) that no presented disclosure matches. */
export interface UndisclosedDigest {
  /** Where: the object holding the `_sd` (`""` the payload), or the array element (`constraints[1]`). */
  path: string;
  /** `claim`: in an object's `_sd` (a decoy or a claim left out: accepted); `element`: an array element (withheld: refused). */
  kind: "claim" | "element";
  digest: string;
}

/** What resolution found. */
export interface DisclosureResolution {
  /** The claims with every presented disclosure in place; `_sd`, `_sd_alg` and undisclosed elements removed. */
  claims: Record<string, unknown>;
  /** Every digest without a disclosure, in payload order. */
  undisclosed: UndisclosedDigest[];
  /** Empty when the disclosures are sound (undisclosed claims do not count; withheld elements do). */
  problems: MandateProblem[];
}

interface Disclosure {
  /** Position in the presentation (1-based, for messages). */
  index: number;
  digest: string;
  /** The claim name of an object-property disclosure; undefined for an array element's. */
  name?: string;
  value: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const RESERVED = new Set(["_sd", "...", "_sd_alg"]);
const B64URL = /^[A-Za-z0-9_-]+$/;

/** The digest of an encoded disclosure: base64url(SHA-256(its ASCII text)). */
export function disclosureDigest(encoded: string): string {
  return sha256(encoded).toString("base64url");
}

const describe = (d: Disclosure): string =>
  d.name === undefined ? `disclosure ${d.index} (an array element)` : `disclosure ${d.index} (claim ${JSON.stringify(d.name)})`;
const where = (path: string): string => path || "the payload";
const isArrayDigest = (v: unknown): v is { "...": unknown } => isRecord(v) && Object.keys(v).length === 1 && "..." in v;
/** Sets an own member, even one named `__proto__` (a plain assignment would set the prototype). */
const put = (o: Record<string, unknown>, k: string, v: unknown): void =>
  void Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

/** Decodes one presented disclosure, or says why it is not one. */
function decodeDisclosure(encoded: string, index: number): Disclosure | string {
  if (!B64URL.test(encoded)) return `disclosure ${index} is not base64url`;
  let arr: unknown;
  try {
    arr = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(encoded, "base64url")));
  } catch {
    return `disclosure ${index} is not JSON in UTF-8`;
  }
  if (!Array.isArray(arr) || (arr.length !== 2 && arr.length !== 3) || typeof arr[0] !== "string") {
    return `disclosure ${index} is not [salt, value] or [salt, name, value]`;
  }
  if (arr.length === 3 && typeof arr[1] !== "string") return `disclosure ${index}: its claim name is not a string`;
  const digest = disclosureDigest(encoded);
  return arr.length === 3 ? { index, digest, name: arr[1] as string, value: arr[2] } : { index, digest, value: arr[1] };
}

/** Every digest string a value names (its `_sd` members and `{"...": digest}` elements), at any depth up to MAX_DEPTH. */
function digestsIn(v: unknown, depth = 0, out: string[] = []): string[] {
  if (depth > MAX_DEPTH) return out;
  if (Array.isArray(v)) {
    for (const el of v) {
      if (isArrayDigest(el) && typeof el["..."] === "string") out.push(el["..."]);
      else digestsIn(el, depth + 1, out);
    }
  } else if (isRecord(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (k === "_sd" && Array.isArray(x)) out.push(...x.filter((d): d is string => typeof d === "string"));
      else digestsIn(x, depth + 1, out);
    }
  }
  return out;
}

/**
 * Resolves the presented disclosures (`encoded`: the parts between the issuer JWT and the
 * key-binding JWT) against the signed payload. See the module comment.
 */
export function resolveDisclosures(payload: Record<string, unknown>, encoded: readonly string[]): DisclosureResolution {
  const problems: MandateProblem[] = [];
  const invalid = (message: string): void => void problems.push({ code: "DISCLOSURE_INVALID", message });
  const undisclosed: UndisclosedDigest[] = [];

  const alg = payload._sd_alg;
  if (alg !== undefined && alg !== SD_ALG) {
    invalid(`_sd_alg ${JSON.stringify(alg)} is not supported (${SD_ALG} only)`);
    return { claims: {}, undisclosed, problems };
  }

  const byDigest = new Map<string, Disclosure>();
  encoded.forEach((text, i) => {
    const d = decodeDisclosure(text, i + 1);
    if (typeof d === "string") return invalid(d);
    if (byDigest.has(d.digest)) return invalid(`${describe(d)} is presented twice`);
    byDigest.set(d.digest, d);
  });

  const seen = new Set<string>();
  const used = new Set<string>();
  /** The disclosure of digest `dg`, marking it seen; undefined when there is none (or the digest repeats). */
  const lookup = (dg: unknown, at: string): Disclosure | undefined | null => {
    if (typeof dg !== "string") {
      invalid(`${at}: a digest is not a string`);
      return null;
    }
    if (seen.has(dg)) {
      invalid(`${at}: digest ${dg} occurs more than once`);
      return null;
    }
    seen.add(dg);
    const d = byDigest.get(dg);
    if (d) used.add(dg);
    return d;
  };

  let tooDeep = false;
  const resolve = (node: unknown, path: string, depth: number): unknown => {
    if (depth > MAX_DEPTH) {
      if (!tooDeep) invalid(`${where(path)}: the payload is nested more than ${MAX_DEPTH} levels deep`);
      tooDeep = true;
      return undefined;
    }
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      node.forEach((el, i) => {
        const at = `${path}[${i}]`;
        if (!isArrayDigest(el)) {
          out.push(resolve(el, at, depth + 1));
          return;
        }
        const d = lookup(el["..."], at);
        if (d === null) return;
        if (d === undefined) {
          const dg = el["..."] as string;
          undisclosed.push({ path: at, kind: "element", digest: dg });
          problems.push({
            code: "DISCLOSURE_MISSING",
            message: `${at} is withheld (digest ${dg} has no disclosure): an array element is a constraint or part of one, which Writ maps whole, so every element must be disclosed (an array decoy cannot be told from a withheld element)`,
          });
          return;
        }
        if (d.name !== undefined) {
          invalid(`${at}: ${describe(d)} names a claim, but an array element's disclosure is [salt, value]`);
          return;
        }
        out.push(resolve(d.value, at, depth + 1));
      });
      return out;
    }
    if (!isRecord(node)) return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === "_sd") continue;
      if (k === "_sd_alg") {
        if (depth > 0) invalid(`${where(path)}: _sd_alg may appear only at the top level of the payload`);
        continue;
      }
      put(out, k, resolve(v, path ? `${path}.${k}` : k, depth + 1));
    }
    if (!("_sd" in node)) return out;
    const sd = node._sd;
    if (!Array.isArray(sd)) {
      invalid(`${where(path)}: _sd must be an array of digests`);
      return out;
    }
    for (const dg of sd) {
      const d = lookup(dg, `${where(path)}._sd`);
      if (d === null) continue;
      if (d === undefined) {
        undisclosed.push({ path, kind: "claim", digest: dg as string });
        continue;
      }
      if (d.name === undefined) {
        invalid(`${where(path)}: ${describe(d)} is an array element's, but _sd digests name claims`);
        continue;
      }
      if (RESERVED.has(d.name) || Object.prototype.hasOwnProperty.call(out, d.name)) {
        invalid(`${where(path)}: ${describe(d)} names ${RESERVED.has(d.name) ? "the reserved" : "the existing"} claim ${JSON.stringify(d.name)}`);
        continue;
      }
      put(out, d.name, resolve(d.value, path ? `${path}.${d.name}` : d.name, depth + 1));
    }
    return out;
  };
  const claims = resolve(payload, "", 0) as Record<string, unknown>;

  // Every presented disclosure referenced exactly once; name the unreferenced ones that sit
  // inside another unreferenced one as such (their parent is what is wrong or missing).
  const unused = [...byDigest.values()].filter((d) => !used.has(d.digest));
  const unusedDigests = new Set(unused.map((d) => d.digest));
  const nested = new Set<string>();
  for (const d of unused) for (const dg of digestsIn(d.value)) if (unusedDigests.has(dg) && dg !== d.digest) nested.add(dg);
  for (const d of unused) {
    problems.push({
      code: "DISCLOSURE_UNREFERENCED",
      message: nested.has(d.digest)
        ? `${describe(d)} is nested in a disclosure that no digest references (so it is not part of the signed claims)`
        : `${describe(d)} matches no digest of the signed payload or of a presented disclosure (altered, from another token, or nested in a withheld disclosure)`,
    });
  }
  return { claims, undisclosed, problems };
}
