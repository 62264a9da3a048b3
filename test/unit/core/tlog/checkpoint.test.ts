import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { proofErrorCode } from "../../../helpers/tlog.js";
import { generateSigner, signerFromSeed } from "../../../../src/core/jose/index.js";
import { appendLeaves, checkpointBody, leafHash, noteKeyHash, signCheckpoint, signNote, verifyCheckpoint } from "../../../../src/core/tlog/index.js";

const signer = signerFromSeed(Buffer.alloc(32, 7));
const ORIGIN = "writ.example/log";
const tree = appendLeaves(0, [], [leafHash(Buffer.from("a")), leafHash(Buffer.from("b")), leafHash(Buffer.from("c"))]);

const code = proofErrorCode;

describe("checkpoints", () => {
  it("writes the C2SP body: origin, decimal size, base64 root", () => {
    expect(checkpointBody(ORIGIN, 3, tree.root)).toBe(`${ORIGIN}\n3\n${tree.root.toString("base64")}\n`);
    expect(checkpointBody(ORIGIN, 0, Buffer.alloc(32))).toBe(`${ORIGIN}\n0\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n`);
  });

  it("signs with one em-dash line carrying key hash and Ed25519 signature", () => {
    const note = signCheckpoint(signer, ORIGIN, 3, tree.root);
    const body = checkpointBody(ORIGIN, 3, tree.root);
    expect(note.startsWith(`${body}\n\u2014 ${ORIGIN} `)).toBe(true);
    expect(note.endsWith("\n")).toBe(true);
    const sig = Buffer.from(note.slice(body.length + 1).split(" ")[2] as string, "base64");
    expect(sig.length).toBe(68);
    const pub = Buffer.from(signer.publicJwk.x, "base64url");
    const want = createHash("sha256")
      .update(`${ORIGIN}\n`)
      .update(Buffer.from([1]))
      .update(pub)
      .digest()
      .subarray(0, 4);
    expect(sig.subarray(0, 4).equals(want)).toBe(true);
    expect(noteKeyHash(ORIGIN, signer.publicJwk).equals(want)).toBe(true);
  });

  it("round-trips size and root", () => {
    const note = signCheckpoint(signer, ORIGIN, tree.size, tree.root);
    const out = verifyCheckpoint(note, ORIGIN, signer.publicJwk);
    expect(out.size).toBe(3);
    expect(out.root.equals(tree.root)).toBe(true);
    const big = verifyCheckpoint(signCheckpoint(signer, ORIGIN, Number.MAX_SAFE_INTEGER, tree.root), ORIGIN, signer.publicJwk);
    expect(big.size).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("rejects a tampered note", () => {
    const note = signCheckpoint(signer, ORIGIN, 3, tree.root);
    expect(code(() => verifyCheckpoint(note.replace("\n3\n", "\n4\n"), ORIGIN, signer.publicJwk))).toBe("PROOF_INVALID");
    const otherRoot = Buffer.from(tree.root);
    otherRoot[0] = (otherRoot[0] as number) ^ 1;
    const swapped = note.replace(tree.root.toString("base64"), otherRoot.toString("base64"));
    expect(code(() => verifyCheckpoint(swapped, ORIGIN, signer.publicJwk))).toBe("PROOF_INVALID");
    expect(code(() => verifyCheckpoint(note, ORIGIN, generateSigner("EdDSA").publicJwk))).toBe("PROOF_INVALID");
    expect(code(() => verifyCheckpoint(note, "other.example/log", signer.publicJwk))).toBe("PROOF_INVALID");
    expect(code(() => verifyCheckpoint(note.slice(0, -1), ORIGIN, signer.publicJwk))).toBe("PROOF_MALFORMED");
  });

  it("ignores other signers' lines (witness cosignatures)", () => {
    const note = signCheckpoint(signer, ORIGIN, 3, tree.root);
    const witness = signNote(generateSigner("EdDSA"), "witness.example", checkpointBody(ORIGIN, 3, tree.root));
    const cosigned = note + witness.slice(witness.lastIndexOf("\n\n") + 2);
    expect(verifyCheckpoint(cosigned, ORIGIN, signer.publicJwk).size).toBe(3);
  });

  it("rejects bodies that are signed but not checkpoints", () => {
    const sign = (body: string): string => signNote(signer, ORIGIN, body);
    const root = tree.root.toString("base64");
    expect(code(() => verifyCheckpoint(sign(`other.example/log\n3\n${root}\n`), ORIGIN, signer.publicJwk))).toBe("PROOF_INVALID");
    for (const body of [
      `${ORIGIN}\n03\n${root}\n`,
      `${ORIGIN}\n-3\n${root}\n`,
      `${ORIGIN}\n3.0\n${root}\n`,
      `${ORIGIN}\n18446744073709551615\n${root}\n`,
      `${ORIGIN}\n3\n${root.slice(0, -4)}\n`,
      `${ORIGIN}\n3\n${tree.root.toString("base64url")}\n`,
      `${ORIGIN}\n3\n`,
    ]) {
      expect(code(() => verifyCheckpoint(sign(body), ORIGIN, signer.publicJwk))).toBe("PROOF_MALFORMED");
    }
    // Extension lines are allowed by the spec and ignored.
    expect(verifyCheckpoint(sign(`${ORIGIN}\n3\n${root}\nextension\n`), ORIGIN, signer.publicJwk).size).toBe(3);
  });

  it("refuses to write a checkpoint from bad input", () => {
    expect(code(() => checkpointBody("has space", 3, tree.root))).toBe("PROOF_MALFORMED");
    expect(code(() => checkpointBody("a\nb", 3, tree.root))).toBe("PROOF_MALFORMED");
    expect(code(() => checkpointBody(ORIGIN, -1, tree.root))).toBe("PROOF_MALFORMED");
    expect(code(() => checkpointBody(ORIGIN, 3, Buffer.alloc(31)))).toBe("PROOF_MALFORMED");
  });
});
