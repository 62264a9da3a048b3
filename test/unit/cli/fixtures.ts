/**
 * Files for CLI tests: a temporary directory, key files written from fresh signers, and YAML
 * documents.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { generateSigner, privateJwk, type JwsAlg, type Signer } from "../../../src/core/jose/index.js";

/** A fresh temporary directory. */
export function tempDir(label = "writ-cli-"): string {
  return mkdtempSync(join(tmpdir(), label));
}

/** A fresh signer and the paths of its private (0600) and public JWK files in `dir`. */
export function keyFiles(dir: string, name: string, alg: JwsAlg = "EdDSA"): { signer: Signer; privateFile: string; publicFile: string } {
  const signer = generateSigner(alg);
  const privateFile = join(dir, `${name}.private.jwk.json`);
  const publicFile = join(dir, `${name}.public.jwk.json`);
  writeFileSync(privateFile, JSON.stringify(privateJwk(signer)), { mode: 0o600 });
  writeFileSync(publicFile, JSON.stringify(signer.publicJwk));
  return { signer, privateFile, publicFile };
}

/** Writes `value` as YAML (or JSON for a .json name) into `dir`; returns the path. */
export function writeDoc(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, name.endsWith(".json") ? JSON.stringify(value, null, 2) : stringify(value));
  return path;
}
