/**
 * Verifies a proof bundle step by step, and says what each step established:
 *
 * 1. entry: exact members, kind, the `prev_entry_hash` rule, `entry_hash` recomputed from the
 *    content (`verifyLogEntry`), and the sequence the bundle claims;
 * 2. leaf: the proof is well formed (exact members, `index` = sequence - 1, every side hint as
 *    RFC 9162 derives it) and the RFC 6962 leaf hash of the canonical entry is the proof's leaf;
 * 3. key: the key the head must verify with (see ./trust.ts);
 * 4. tree head: its members and its JWS (`verifyTreeHead`);
 * 5. inclusion: the proof is for the signed head's size and root, and its hashes lead from the
 *    leaf to that root (`verifyInclusion`).
 *
 * Verification stops at the first failed step; every step ran is reported. Nothing throws.
 */
import { hashBytes, hashFromBytes, isHashString, type HashString } from "../../core/canonical/index.js";
import { logLeafHash, proofSides, treeHeadRoot, verifyInclusion, verifyLogEntry, verifyTreeHead, type LogEntry, type TreeHead } from "../../core/tlog/index.js";
import { CliError } from "../errors.js";
import type { LogBundle } from "./bundle-format.js";
import { chooseKey, type ChosenKey, type KeyPin } from "./trust.js";

/** One verification step. */
export interface VerifyStep {
  step: "entry" | "leaf" | "key" | "tree head" | "inclusion";
  ok: boolean;
  detail: string;
}

/** The report of a verification. */
export interface VerifyReport {
  verified: boolean;
  sequence: number;
  steps: VerifyStep[];
  tree_head?: { tree_size: number; root: string; at: string; kid: string; pinned: boolean };
}

interface ProofParts {
  sequence: number;
  index: number;
  leaf: HashString;
  hashes: Buffer[];
  sides: string[];
  root: HashString;
  treeSize: number;
}

const PROOF_MEMBERS = ["sequence", "index", "leaf", "proof", "root", "tree_size"];
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

class StepFailure extends Error {}

function parseProof(p: unknown): ProofParts {
  if (!isObj(p)) throw new StepFailure("the inclusion proof is not an object");
  for (const k of Object.keys(p)) if (!PROOF_MEMBERS.includes(k)) throw new StepFailure(`the inclusion proof has an unexpected member ${JSON.stringify(k)}`);
  if (!isCount(p.sequence) || !isCount(p.index) || !isCount(p.tree_size))
    throw new StepFailure("the inclusion proof's sequence, index and tree_size must be whole numbers");
  if (!isHashString(p.leaf) || !isHashString(p.root)) throw new StepFailure("the inclusion proof's leaf and root must be sha256: hashes");
  if (!Array.isArray(p.proof)) throw new StepFailure("the inclusion proof's proof must be a list");
  const hashes: Buffer[] = [];
  const sides: string[] = [];
  p.proof.forEach((item: unknown, i) => {
    if (!isObj(item) || Object.keys(item).length !== 2 || !isHashString(item.hash) || typeof item.side !== "string") {
      throw new StepFailure(`proof step ${i} must be exactly {hash: sha256:..., side}`);
    }
    hashes.push(hashBytes(item.hash));
    sides.push(item.side);
  });
  return { sequence: p.sequence, index: p.index, leaf: p.leaf, hashes, sides, root: p.root, treeSize: p.tree_size };
}

function entryStep(bundle: LogBundle): { entry: LogEntry; detail: string } {
  const problem = verifyLogEntry(bundle.entry);
  if (problem !== undefined) throw new StepFailure(`the entry does not verify: ${problem}`);
  const entry = bundle.entry as LogEntry;
  if (entry.sequence !== bundle.sequence) throw new StepFailure(`the entry has sequence ${entry.sequence}, not the ${bundle.sequence} asked for`);
  const chain = entry.prev_entry_hash === undefined ? "first entry, no prev_entry_hash" : `prev_entry_hash ${entry.prev_entry_hash}`;
  return { entry, detail: `${entry.kind} entry ${entry.sequence}: entry_hash ${entry.entry_hash} matches its content; ${chain}` };
}

function leafStep(entry: LogEntry, proof: ProofParts): { leaf: Buffer; detail: string } {
  if (proof.sequence !== entry.sequence) throw new StepFailure(`the proof is for sequence ${proof.sequence}, not ${entry.sequence}`);
  if (proof.index !== entry.sequence - 1) throw new StepFailure(`the proof's index ${proof.index} is not sequence - 1 = ${entry.sequence - 1}`);
  let derived: string[];
  try {
    derived = proofSides(proof.index, proof.treeSize, proof.hashes);
  } catch (e) {
    throw new StepFailure(`the proof does not fit index ${proof.index} in a tree of ${proof.treeSize}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const wrong = derived.findIndex((s, i) => proof.sides[i] !== s);
  if (wrong !== -1)
    throw new StepFailure(`proof step ${wrong}'s side ${JSON.stringify(proof.sides[wrong])} is not the ${derived[wrong]} that index and size give`);
  const leaf = logLeafHash(entry);
  const leafText = hashFromBytes(leaf);
  if (leafText !== proof.leaf) throw new StepFailure(`the entry's leaf hash ${leafText} is not the proof's leaf ${proof.leaf}`);
  return { leaf, detail: `RFC 6962 leaf hash ${leafText} of the canonical entry is the proof's leaf (index ${proof.index})` };
}

async function headStep(bundle: LogBundle, key: ChosenKey): Promise<{ head: TreeHead; detail: string }> {
  try {
    const head = await verifyTreeHead(bundle.tree_head, key.key);
    return { head, detail: `signature by ${key.kid} verifies: tree_size ${head.tree_size}, root ${head.root}, at ${head.at}` };
  } catch (e) {
    throw new StepFailure(`the tree head does not verify with ${key.kid}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function inclusionStep(leaf: Buffer, proof: ProofParts, head: TreeHead): string {
  if (proof.treeSize !== head.tree_size) throw new StepFailure(`the proof is for a tree of ${proof.treeSize} entries, the signed head has ${head.tree_size}`);
  if (proof.root !== head.root) throw new StepFailure(`the proof's root ${proof.root} is not the signed head's root ${head.root}`);
  try {
    verifyInclusion(leaf, proof.index, head.tree_size, proof.hashes, treeHeadRoot(head));
  } catch (e) {
    throw new StepFailure(`the inclusion proof does not verify: ${e instanceof Error ? e.message : String(e)}`);
  }
  return `${proof.hashes.length} proof hash(es) lead from the leaf to the signed root ${head.root}`;
}

/** Verifies `bundle` with the key trust `pin`; `listSource` names where its key list came from. */
export async function verifyBundle(bundle: LogBundle, pin: KeyPin, listSource: string): Promise<VerifyReport> {
  const report: VerifyReport = { verified: false, sequence: bundle.sequence, steps: [] };
  let current: VerifyStep["step"] = "entry";
  const ok = (detail: string) => report.steps.push({ step: current, ok: true, detail });
  try {
    const { entry, detail } = entryStep(bundle);
    ok(detail);
    current = "leaf";
    const proof = parseProof(bundle.proof);
    const { leaf, detail: leafDetail } = leafStep(entry, proof);
    ok(leafDetail);
    current = "key";
    const key = chooseKey(isObj(bundle.tree_head) ? bundle.tree_head.signature : undefined, bundle.keys, pin, listSource);
    ok(`${key.kid}, ${key.how}`);
    current = "tree head";
    const { head, detail: headDetail } = await headStep(bundle, key);
    ok(headDetail);
    current = "inclusion";
    ok(inclusionStep(leaf, proof, head));
    report.verified = true;
    report.tree_head = { tree_size: head.tree_size, root: head.root, at: head.at, kid: key.kid, pinned: key.pinned };
  } catch (e) {
    const detail = e instanceof StepFailure || e instanceof CliError ? e.message : `unexpected: ${e instanceof Error ? e.message : String(e)}`;
    report.steps.push({ step: current, ok: false, detail });
  }
  return report;
}
