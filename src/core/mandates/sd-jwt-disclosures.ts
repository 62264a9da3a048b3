/**
 * The disclosure rules the SD-JWT library leaves to its caller (it ignores a disclosure that
 * matches no digest, and drops a digest without a disclosure). Walks the signed payload and
 * every disclosed value reachable from it:
 *
 * - each disclosure is referenced exactly once (else DISCLOSURE_UNREFERENCED: altered, or from
 *   another token; or DISCLOSURE_INVALID when referenced twice or repeated);
 * - each digest has its disclosure (else DISCLOSURE_MISSING: a withheld claim or element);
 * - an object digest (`_sd`) resolves to `[salt, name, value]` with a name that is not `_sd`,
 *   `...` or `_sd_alg` and not already a claim of that object; an array digest
 *   (`{"...": digest}`) resolves to `[salt, value]` (else DISCLOSURE_INVALID).
 */
import type { MandateProblem } from "./sd-jwt-problems.js";

type Hasher = (data: string | ArrayBuffer, alg: string) => Uint8Array;

/** What this module reads of a library disclosure. */
interface Disclosure {
  key?: string;
  value: unknown;
  digest(hash: { hasher: Hasher; alg: string }): Promise<string>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const RESERVED = new Set(["_sd", "...", "_sd_alg"]);
/** Deepest nesting walked; deeper is refused (a mandate is a few levels deep). */
const MAX_DEPTH = 32;

function describe(d: Disclosure): string {
  return d.key === undefined ? "of an array element" : `of claim ${JSON.stringify(d.key)}`;
}

/** Problems of the payload's disclosures (see the module comment); empty when they are sound. */
export async function checkDisclosures(payload: Record<string, unknown>, disclosures: readonly Disclosure[], hasher: Hasher): Promise<MandateProblem[]> {
  const out: MandateProblem[] = [];
  const byDigest = new Map<string, Disclosure>();
  for (const d of disclosures) {
    const dg = await d.digest({ hasher, alg: "sha-256" });
    if (byDigest.has(dg)) out.push({ code: "DISCLOSURE_INVALID", message: `disclosure ${describe(d)} is presented twice` });
    byDigest.set(dg, d);
  }
  const used = new Set<string>();

  /** The disclosure of `dg` at `where`, marking it used; undefined (with a problem) when missing or reused. */
  const take = (dg: unknown, where: string): Disclosure | undefined => {
    if (typeof dg !== "string") {
      out.push({ code: "DISCLOSURE_INVALID", message: `${where}: a digest is not a string` });
      return undefined;
    }
    const d = byDigest.get(dg);
    if (!d) {
      out.push({ code: "DISCLOSURE_MISSING", message: `${where} is withheld (digest ${dg} has no disclosure); Writ maps the whole mandate, so every disclosure must be presented` });
      return undefined;
    }
    if (used.has(dg)) {
      out.push({ code: "DISCLOSURE_INVALID", message: `${where}: digest ${dg} is referenced more than once` });
      return undefined;
    }
    used.add(dg);
    return d;
  };

  let tooDeep = false;
  const visit = (node: unknown, path: string, depth = 0): void => {
    if (depth > MAX_DEPTH) {
      if (!tooDeep) out.push({ code: "DISCLOSURE_INVALID", message: `${path}: the payload is nested more than ${MAX_DEPTH} levels deep` });
      tooDeep = true;
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((el, i) => {
        const at = `${path}[${i}]`;
        if (isRecord(el) && "..." in el) {
          if (Object.keys(el).length !== 1) out.push({ code: "DISCLOSURE_INVALID", message: `${at}: an array digest must be {"...": digest} alone` });
          const d = take(el["..."], at);
          if (!d) return;
          if (d.key !== undefined) out.push({ code: "DISCLOSURE_INVALID", message: `${at}: an array element's disclosure names a claim (${JSON.stringify(d.key)})` });
          visit(d.value, at, depth + 1);
        } else {
          visit(el, at, depth + 1);
        }
      });
      return;
    }
    if (!isRecord(node)) return;
    const names = new Set(Object.keys(node));
    if ("_sd" in node) {
      const sd = node._sd;
      if (!Array.isArray(sd)) out.push({ code: "DISCLOSURE_INVALID", message: `${path || "the payload"}: _sd must be an array of digests` });
      else {
        for (const dg of sd) {
          const d = take(dg, `a claim of ${path || "the payload"}`);
          if (!d) continue;
          if (d.key === undefined) {
            out.push({ code: "DISCLOSURE_INVALID", message: `a claim of ${path || "the payload"}: its disclosure has no claim name` });
            continue;
          }
          if (RESERVED.has(d.key) || names.has(d.key)) {
            out.push({ code: "DISCLOSURE_INVALID", message: `${path || "the payload"}: a disclosure names ${RESERVED.has(d.key) ? "the reserved" : "the existing"} claim ${JSON.stringify(d.key)}` });
            continue;
          }
          names.add(d.key);
          visit(d.value, path ? `${path}.${d.key}` : d.key, depth + 1);
        }
      }
    }
    for (const [k, v] of Object.entries(node)) if (k !== "_sd") visit(v, path ? `${path}.${k}` : k, depth + 1);
  };
  visit(payload, "");

  for (const [dg, d] of byDigest) {
    if (!used.has(dg)) out.push({ code: "DISCLOSURE_UNREFERENCED", message: `disclosure ${describe(d)} matches no digest of the signed payload (altered, or from another token)` });
  }
  return out;
}
