/**
 * Files a verb reads and writes: YAML or JSON documents, private and public JWK files, secret
 * files (API keys) and new files that must not silently replace old ones.
 *
 * Promises: a private key file is written with mode 0600 and never overwritten without
 * `force`; a private key file readable by group or others is used but warned about; a public
 * key is refused where a private one is needed and the other way round, each with the file to
 * pass instead; a document must hold exactly one YAML (or JSON) document.
 */
import { closeSync, fchmodSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { JoseError, parsePublicJwk, signerFromJwk, type PublicJwk, type Signer } from "../core/jose/index.js";
import { CliError } from "./errors.js";
import type { CliIo } from "./io.js";

/** Largest file a verb reads (bytes). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** The text of a file (at most 16 MiB). */
export function readText(path: string, what: string): string {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError("FILE_UNREADABLE", `cannot read ${what} ${path}: ${code === "ENOENT" ? "no such file" : String(code ?? e)}`);
  }
  if (size > MAX_FILE_BYTES) throw new CliError("FILE_UNREADABLE", `${what} ${path} is larger than ${MAX_FILE_BYTES} bytes`);
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new CliError("FILE_UNREADABLE", `cannot read ${what} ${path}: ${String((e as NodeJS.ErrnoException).code ?? e)}`);
  }
}

/** Parses YAML or JSON text holding exactly one document. */
export function parseDocument(text: string, source: string): unknown {
  if (source.endsWith(".json")) {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new CliError("INPUT_INVALID", `${source} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(docs)) throw new CliError("INPUT_INVALID", `${source} holds no YAML document`);
  if (docs.length !== 1) throw new CliError("INPUT_INVALID", `${source} holds ${docs.length} YAML documents; give it exactly one`);
  const doc = docs[0];
  const problem = doc?.errors[0];
  if (doc === undefined || problem !== undefined) {
    throw new CliError("INPUT_INVALID", `${source} is not valid YAML: ${problem?.message ?? "empty"}`);
  }
  return doc.toJS({ maxAliasCount: 100 }) as unknown;
}

/** Reads a YAML or JSON file (`.json` files are parsed as JSON). */
export function readDocument(path: string, what = "file"): unknown {
  return parseDocument(readText(path, what), path);
}

/** A JSON JWK file as an object (not yet validated). */
export function readJwkFile(path: string, what: string): Record<string, unknown> {
  const text = readText(path, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError("INPUT_INVALID", `${what} ${path} is not a JSON JWK`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError("INPUT_INVALID", `${what} ${path} is not a JSON JWK object`);
  }
  return value as Record<string, unknown>;
}

/** Reads a private JWK file into a signer; warns on stderr when group or others may read it. */
export function readPrivateKeyFile(path: string, io: CliIo, flag = "key-file"): Signer {
  const jwk = readJwkFile(path, `--${flag}`);
  if (!("d" in jwk)) {
    throw new CliError("INPUT_INVALID", `--${flag} ${path} is a public key; pass the private key file (<prefix>.private.jwk.json from writ keys generate)`);
  }
  try {
    const mode = statSync(path).mode & 0o077;
    if (mode !== 0) io.stderr(`warning: private key ${path} is readable by group or others; run chmod 600 ${path}\n`);
  } catch {
    // already read; the mode check is advice only
  }
  try {
    return signerFromJwk(jwk);
  } catch (e) {
    throw new CliError("INPUT_INVALID", `--${flag} ${path}: ${e instanceof JoseError ? e.message : "not a usable Ed25519 or P-256 private JWK"}`);
  }
}

/** Reads a public JWK file. */
export function readPublicKeyFile(path: string, flag = "key-file"): PublicJwk {
  const jwk = readJwkFile(path, `--${flag}`);
  if ("d" in jwk) {
    throw new CliError("INPUT_INVALID", `--${flag} ${path} is a private key; pass the public key file (<prefix>.public.jwk.json) instead`);
  }
  try {
    return parsePublicJwk(jwk);
  } catch (e) {
    throw new CliError("INPUT_INVALID", `--${flag} ${path}: ${e instanceof JoseError ? e.message : "not a usable public JWK"}`);
  }
}

/** Reads a secret (an API key) from a file: the first line, trimmed; refuses an empty file. */
export function readSecretFile(path: string, flag: string): string {
  const text = readText(path, `--${flag}`);
  const secret = (text.split(/\r?\n/)[0] ?? "").trim();
  if (secret === "") throw new CliError("INPUT_INVALID", `--${flag} ${path} is empty; its first line must hold the secret`);
  return secret;
}

/**
 * Writes a new file with `mode`; refuses to replace an existing file unless `force`, which
 * removes it first (so a symlink planted at `path` is replaced, never followed, and the new file
 * is created with `mode` from the start).
 */
export function writeFileSafely(path: string, text: string, opts: { mode: number; force?: boolean }): void {
  if (opts.force) {
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT")
        throw new CliError("FILE_UNREADABLE", `cannot replace ${path}: ${String((e as NodeJS.ErrnoException).code ?? e)}`);
    }
  }
  let fd: number;
  try {
    fd = openSync(path, "wx", opts.mode);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new CliError("FILE_EXISTS", `${path} already exists; pass --force to replace it`);
    throw new CliError("FILE_UNREADABLE", `cannot write ${path}: ${String(code ?? e)}`);
  }
  try {
    fchmodSync(fd, opts.mode); // exactly `mode`, whatever the umask
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Throws FILE_EXISTS when `path` exists (so a verb writing two files checks both first). */
export function assertAbsent(path: string): void {
  try {
    statSync(path);
  } catch {
    return;
  }
  throw new CliError("FILE_EXISTS", `${path} already exists; pass --force to replace it`);
}
