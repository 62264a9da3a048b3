/**
 * Signed tree heads: `{algorithm: "EdDSA", at, svc_tree_head: 1, root, tree_size, signature}`.
 * The signature is a flattened JWS (protected `{alg: "EdDSA", kid, typ:
 * "svc-tree-head+jws"}`) whose payload is exactly the RFC 8785 canonical bytes of the head
 * without its `signature` member. A head from the wire is checked member by member before the
 * signature is verified; unknown members are refused.
 */
import { canonicalBytes, hashBytes, hashFromBytes, isHashString, type HashString } from "../canonical/index.js";
import { JoseError, signRecord, verifySignedRecord, type JwsObject, type PublicJwk, type Signer } from "../jose/index.js";
import { parseInstant } from "../time/index.js";
import { checkCount } from "./bits.js";
import { invalid, malformed } from "./errors.js";
import { isTreeHash } from "./hash.js";

/** A signed tree head. */
export interface TreeHead {
  algorithm: "EdDSA";
  at: string;
  svc_tree_head: 1;
  root: HashString;
  tree_size: number;
  signature: JwsObject;
}

/** Protected-header `typ` of a tree head signature. */
export const TREE_HEAD_TYP = "svc-tree-head+jws";

const HEAD_MEMBERS = ["algorithm", "at", "svc_tree_head", "root", "tree_size", "signature"];

/** What a tree head signature covers: the head's members without `signature`. */
function unsignedTreeHead(head: Omit<TreeHead, "signature">): Omit<TreeHead, "signature"> {
  const { algorithm, at, svc_tree_head, root, tree_size } = head;
  return { algorithm, at, svc_tree_head, root, tree_size };
}

/** Canonical payload bytes of a tree head: the head without `signature`. */
export function treeHeadPayload(head: Omit<TreeHead, "signature">): Buffer {
  return canonicalBytes(unsignedTreeHead(head));
}

/**
 * Signs the head of a tree of `treeSize` leaves with root `root` at time `at` (RFC 3339).
 * The signer must be Ed25519. Throws ProofError (PROOF_MALFORMED) on a bad size, root or time
 * and JoseError (JWK_UNSUPPORTED) on a non-Ed25519 signer.
 */
export async function signTreeHead(signer: Signer, treeSize: number, root: Buffer, at: string): Promise<TreeHead> {
  if (signer.alg !== "EdDSA") throw new JoseError("JWK_UNSUPPORTED", "tree heads are signed with an Ed25519 key");
  checkCount(treeSize, "tree size");
  if (!isTreeHash(root)) throw malformed("tree root must be 32 bytes");
  if (parseInstant(at) === undefined) throw malformed("tree head time must be an RFC 3339 date-time");
  const unsigned = { algorithm: "EdDSA" as const, at, svc_tree_head: 1 as const, root: hashFromBytes(root), tree_size: treeSize };
  const signature = await signRecord(unsigned, signer, TREE_HEAD_TYP);
  return { ...unsigned, signature };
}

/** Checks the members of an untrusted tree head (not its signature). Throws PROOF_MALFORMED. */
export function parseTreeHead(head: unknown): TreeHead {
  if (typeof head !== "object" || head === null || Array.isArray(head)) throw malformed("tree head must be a JSON object");
  const h = head as Record<string, unknown>;
  for (const k of Object.keys(h)) {
    if (!HEAD_MEMBERS.includes(k)) throw malformed(`tree head has an unexpected member ${JSON.stringify(k)}`);
  }
  if (h.algorithm !== "EdDSA") throw malformed("tree head algorithm must be EdDSA");
  if (h.svc_tree_head !== 1) throw malformed("tree head svc_tree_head must be 1");
  if (parseInstant(h.at) === undefined) throw malformed("tree head at must be an RFC 3339 date-time");
  if (!isHashString(h.root)) throw malformed("tree head root must be a sha256: hash");
  checkCount(h.tree_size, "tree head tree_size");
  if (typeof h.signature !== "object" || h.signature === null) throw malformed("tree head signature must be a JWS object");
  return {
    algorithm: "EdDSA",
    at: h.at as string,
    svc_tree_head: 1,
    root: h.root,
    tree_size: h.tree_size as number,
    signature: h.signature as JwsObject,
  };
}

/**
 * Verifies an untrusted tree head against the log's public key: members, then the JWS (alg
 * EdDSA, typ `svc-tree-head+jws`, kid when present naming the key, payload exactly the
 * canonical head). Throws ProofError (PROOF_MALFORMED) or JoseError with its code.
 */
export async function verifyTreeHead(head: unknown, key: PublicJwk): Promise<TreeHead> {
  const parsed = parseTreeHead(head);
  const { header } = await verifySignedRecord(parsed.signature, key, { typ: TREE_HEAD_TYP, record: unsignedTreeHead(parsed) });
  if (header.alg !== parsed.algorithm) throw invalid("tree head is not signed with its stated algorithm");
  return parsed;
}

/** The 32 root bytes of a tree head. */
export function treeHeadRoot(head: Pick<TreeHead, "root">): Buffer {
  return hashBytes(head.root);
}
