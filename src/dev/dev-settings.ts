/**
 * The generated secrets of a `writ dev` workspace, kept in `.writ/dev-settings.json` (mode
 * 0600) so they survive restarts: the log append token, the log signing seed, the admin token,
 * the notifier key pair (its public JWK is SVC_PUSH_NOTIFIER_JWK; the private JWK stays here so
 * the CLI can sign revocation pushes) and the embedded Postgres password.
 *
 * File format (version 1): `{version: 1, append_token, log_signing_seed (64 hex), admin_token,
 * notifier: {public_jwk, private_jwk}, postgres_password}`. A file that is missing is created;
 * one that is present but malformed is an error (never silently replaced: it holds keys).
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { generateSigner, privateJwk, signerFromJwk, type PublicJwk } from "../core/jose/index.js";
import { newPassword } from "./postgres.js";

/** The stored dev secrets. */
export interface DevSecrets {
  version: 1;
  append_token: string;
  log_signing_seed: string;
  admin_token: string;
  notifier: { public_jwk: PublicJwk; private_jwk: Record<string, string> };
  postgres_password: string;
}

function token(prefix: string): string {
  return `${prefix}${randomBytes(24).toString("base64url")}`;
}

/** Fresh secrets for a new workspace. */
export function generateDevSecrets(): DevSecrets {
  const notifier = generateSigner("EdDSA");
  return {
    version: 1,
    append_token: token("apt_"),
    log_signing_seed: randomBytes(32).toString("hex"),
    admin_token: token("adm_"),
    notifier: { public_jwk: notifier.publicJwk, private_jwk: privateJwk(notifier) },
    postgres_password: newPassword(),
  };
}

function check(v: unknown, file: string): DevSecrets {
  const s = v as Partial<DevSecrets> | null;
  const ok =
    typeof s === "object" &&
    s !== null &&
    s.version === 1 &&
    typeof s.append_token === "string" &&
    typeof s.admin_token === "string" &&
    typeof s.log_signing_seed === "string" &&
    /^[0-9a-f]{64}$/.test(s.log_signing_seed) &&
    typeof s.postgres_password === "string" &&
    typeof s.notifier === "object" &&
    s.notifier !== null;
  if (!ok) throw new Error(`${file} is not a writ dev settings file (version 1); move it away to start afresh`);
  signerFromJwk(s.notifier?.private_jwk); // throws when the stored key does not load
  return s as DevSecrets;
}

/** Reads `file`, or creates it (mode 0600, parent folder created) with fresh secrets. */
export async function loadOrCreateDevSecrets(file: string): Promise<{ secrets: DevSecrets; created: boolean }> {
  let text: string | null = null;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  if (text !== null) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${file} is not valid JSON; move it away to start afresh`);
    }
    await chmod(file, 0o600);
    return { secrets: check(json, file), created: false };
  }
  const secrets = generateDevSecrets();
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600, flag: "wx" });
  return { secrets, created: true };
}

/** The environment variables the dev secrets stand for. */
export function devSecretsEnv(s: DevSecrets): Record<string, string> {
  return {
    SVC_APPEND_TOKEN: s.append_token,
    SVC_LOG_SIGNING_SEED: s.log_signing_seed,
    BUR_ADMIN_TOKEN: s.admin_token,
    SVC_PUSH_NOTIFIER_JWK: JSON.stringify(s.notifier.public_jwk),
  };
}
