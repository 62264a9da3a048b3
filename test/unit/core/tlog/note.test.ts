// Known-answer tests from golang.org/x/mod/sumdb/note (note_test.go, BSD-3-Clause): the
// "PeterNeumann" key, its key hash c74f20a3 and the exact signed note Go produces.
import { describe, expect, it } from "vitest";
import { proofErrorCode } from "../../../helpers/tlog.js";
import { generateSigner, signerFromSeed } from "../../../../src/core/jose/index.js";
import { noteKeyHash, noteVerifierKey, openNote, parseNoteVerifierKey, signNote } from "../../../../src/core/tlog/index.js";

const SKEY = Buffer.from("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz", "base64"); // 0x01 || seed
const VKEY = Buffer.from("ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "base64"); // 0x01 || public key
const peter = signerFromSeed(SKEY.subarray(1));
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIG = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

const code = proofErrorCode;

describe("signed notes", () => {
  it("derives the key of the Go test vector", () => {
    expect(Buffer.from(peter.publicJwk.x, "base64url").equals(VKEY.subarray(1))).toBe(true);
    expect(noteKeyHash("PeterNeumann", peter.publicJwk).toString("hex")).toBe("c74f20a3");
  });

  it("writes and reads the verifier key text exactly as sumdb/note (name+hash+base64 key)", () => {
    const text = `PeterNeumann+c74f20a3+${VKEY.toString("base64")}`;
    expect(noteVerifierKey("PeterNeumann", peter.publicJwk)).toBe(text);
    const parsed = parseNoteVerifierKey(text);
    expect(parsed).toEqual({ name: "PeterNeumann", key: { kty: "OKP", crv: "Ed25519", x: peter.publicJwk.x } });
    expect(openNote(`${TEXT}\n${PETER_SIG}`, parsed.name, parsed.key)).toBe(TEXT);
    for (const bad of [
      `PeterNeumann+c74f20a4+${VKEY.toString("base64")}`,
      `Peter+c74f20a3+${VKEY.toString("base64")}`,
      "PeterNeumann+c74f20a3",
      `PeterNeumann+c74f20a3+${SKEY.subarray(1).toString("base64")}`,
    ]) {
      expect(
        code(() => parseNoteVerifierKey(bad)),
        bad,
      ).toBe("PROOF_MALFORMED");
    }
  });

  it("reads a verifier key whose base64 holds '+' (only the first two '+' separate)", () => {
    for (let i = 0; i < 64; i++) {
      const signer = signerFromSeed(Buffer.alloc(32, i).toString("hex"));
      const text = noteVerifierKey("writ.test/log", signer.publicJwk);
      expect(parseNoteVerifierKey(text)).toEqual({ name: "writ.test/log", key: { kty: "OKP", crv: "Ed25519", x: signer.publicJwk.x } });
    }
    // Some of those keys really hold a "+" in their base64 (otherwise the loop proves nothing).
    const plus = Array.from({ length: 64 }, (_, i) => noteVerifierKey("n", signerFromSeed(Buffer.alloc(32, i).toString("hex")).publicJwk)).filter(
      (t) => t.split("+").length > 3,
    );
    expect(plus.length).toBeGreaterThan(0);
  });

  it("signs byte for byte like sumdb/note", () => {
    expect(signNote(peter, "PeterNeumann", TEXT)).toBe(`${TEXT}\n${PETER_SIG}`);
  });

  it("opens a note, ignoring signatures by other keys", () => {
    expect(openNote(`${TEXT}\n${PETER_SIG}`, "PeterNeumann", peter.publicJwk)).toBe(TEXT);
    expect(openNote(`${TEXT}\n${ENOCH_SIG}${PETER_SIG}`, "PeterNeumann", peter.publicJwk)).toBe(TEXT);
    expect(openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, "PeterNeumann", peter.publicJwk)).toBe(TEXT);
  });

  it("rejects a note without a signature by the key", () => {
    expect(code(() => openNote(`${TEXT}\n${ENOCH_SIG}`, "PeterNeumann", peter.publicJwk))).toBe("PROOF_INVALID");
    const other = generateSigner("EdDSA");
    expect(code(() => openNote(`${TEXT}\n${PETER_SIG}`, "PeterNeumann", other.publicJwk))).toBe("PROOF_INVALID");
    // Same key under another name: key ID and name both differ, so the line is someone else's.
    expect(code(() => openNote(`${TEXT}\n${PETER_SIG}`, "Peter", peter.publicJwk))).toBe("PROOF_INVALID");
  });

  it("rejects a bad signature by the key and a tampered text", () => {
    const bad = `${TEXT}\n${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`;
    expect(code(() => openNote(bad, "PeterNeumann", peter.publicJwk))).toBe("PROOF_INVALID");
    const tampered = `${TEXT.replace("answer", "answers")}\n${PETER_SIG}`;
    expect(code(() => openNote(tampered, "PeterNeumann", peter.publicJwk))).toBe("PROOF_INVALID");
    // A good signature followed by a failing one from the same key rejects the note.
    expect(code(() => openNote(`${TEXT}\n${PETER_SIG}${bad.slice(TEXT.length + 1)}`, "PeterNeumann", peter.publicJwk))).toBe("PROOF_INVALID");
  });

  it("rejects malformed notes (the sumdb/note list)", () => {
    const bad = [
      TEXT,
      `${TEXT}\n`,
      `${TEXT}\n${PETER_SIG.slice(0, -1)}`,
      `\u0001${TEXT}\n${PETER_SIG}`,
      `\ud800${TEXT}\n${PETER_SIG}`,
      `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${TEXT}\n${PETER_SIG}Unexpected line.\n`,
      `${TEXT}\n${PETER_SIG.replace("— ", "-- ")}`,
      `${TEXT}\n${PETER_SIG.replace("=\n", "\n")}`,
      `${TEXT}\n— PeterNeumann AAAA\n`,
      `${TEXT}\n— PeterNeumann\n`,
      `${TEXT}\n${PETER_SIG.repeat(101)}`,
    ];
    for (const note of bad) expect(code(() => openNote(note, "PeterNeumann", peter.publicJwk))).toBe("PROOF_MALFORMED");
  });

  it("refuses to sign malformed text or names", () => {
    expect(code(() => signNote(peter, "PeterNeumann", "no newline"))).toBe("PROOF_MALFORMED");
    expect(code(() => signNote(peter, "Peter Neumann", TEXT))).toBe("PROOF_MALFORMED");
    expect(code(() => signNote(peter, "a+b", TEXT))).toBe("PROOF_MALFORMED");
    expect(code(() => signNote(peter, "", TEXT))).toBe("PROOF_MALFORMED");
    expect(code(() => signNote(peter, "PeterNeumann", "tab\there\n"))).toBe("PROOF_MALFORMED");
  });

  it("accepts only Ed25519 keys", () => {
    const p256 = generateSigner("ES256");
    expect(() => signNote(p256, "x", TEXT)).toThrow(expect.objectContaining({ code: "JWK_UNSUPPORTED" }));
    expect(() => noteKeyHash("x", p256.publicJwk)).toThrow(expect.objectContaining({ code: "JWK_UNSUPPORTED" }));
  });
});
