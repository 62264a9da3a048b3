/**
 * The transparency log core (RFC 6962 / RFC 9162 Merkle tree, pure, no I/O): hashing, the
 * append-only tree over stored full-subtree nodes, proof plans and proofs, RFC 9162 verifiers,
 * log entries, signed tree heads (JWS) and C2SP checkpoints (signed notes).
 */
export { ProofError, type ProofErrorCode } from "./errors.js";
export { EMPTY_ROOT, HASH_SIZE, leafHash, nodeHash } from "./hash.js";
export { appendLeaves, frontierNodes, nodeKey, rootFromFrontier, type NodeId, type TreeNode } from "./tree.js";
export { consistencyPlan, consistencyProof, inclusionPlan, inclusionProof, rootAt, rootPlan, type NodeReader } from "./proof.js";
export { proofSides, rootFromInclusionProof, verifyConsistency, verifyInclusion, type ProofSide } from "./verify.js";
export {
  LOG_KINDS,
  LogEntryError,
  buildLogEntry,
  isLogKind,
  logLeafHash,
  verifyLogEntry,
  verifyLogLink,
  type LogEntry,
  type LogEntryErrorCode,
  type LogKind,
} from "./entry.js";
export { TREE_HEAD_TYP, parseTreeHead, signTreeHead, treeHeadPayload, treeHeadRoot, verifyTreeHead, type TreeHead } from "./treehead.js";
export { checkpointBody, isCheckpointOrigin, noteKeyHash, signCheckpoint, verifyCheckpoint } from "./checkpoint.js";
export { noteVerifierKey, openNote, parseNoteVerifierKey, signNote } from "./note.js";
