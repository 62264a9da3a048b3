/**
 * The keys plugin: decorates `logSigner` (the transparency log's Ed25519 signer loaded from
 * SVC_LOG_SIGNING_SEED, or null) and `keyList`, the answer of `GET /.well-known/svc-keys.json`,
 * computed once at start-up.
 *
 * Key list rule: the log public key first (`{public_key: {crv, kid, kty, x}, checkpoint_origin,
 * note_verifier_key}`, kid the `sha256:` RFC 7638 thumbprint hex; the last two, present when
 * WRIT_LOG_ORIGIN is a valid origin, are what a third party needs to verify the log's C2SP
 * checkpoints: the origin and the sumdb/note verifier key `<origin>+<hex key ID>+<base64
 * key>`, docs/formats.md "Transparency log"), then every record of SVC_PUBLISHED_KEYS. No seed and no
 * records: 200 `{keys: []}`. A seed or a published key that is configured but fails to load:
 * 500 `{error: "<SETTING> failed to load"}` (the setting named, its value never shown).
 */
import fp from "fastify-plugin";
import type { Signer } from "../../core/jose/index.js";
import { noteVerifierKey } from "../../core/tlog/index.js";
import type { PublishedKeyRecord, Settings } from "../settings.js";

/** The precomputed answer of the key list. */
export interface KeyListAnswer {
  readonly status: 200 | 500;
  readonly body: { readonly keys: readonly PublishedKeyRecord[] } | { readonly error: string };
}

declare module "fastify" {
  interface FastifyInstance {
    /** The log signing key, or null when SVC_LOG_SIGNING_SEED is unset or does not load. */
    readonly logSigner: Signer | null;
    /** The key list answer, computed once. */
    readonly keyList: KeyListAnswer;
  }
}

/** The key list answer for `settings` (see the module comment). */
export function buildKeyList(settings: Settings): KeyListAnswer {
  if (settings.logSigner.status === "invalid") {
    return { status: 500, body: { error: "SVC_LOG_SIGNING_SEED failed to load" } };
  }
  if (settings.publishedKeys.status === "invalid") {
    return { status: 500, body: { error: "SVC_PUBLISHED_KEYS failed to load" } };
  }
  const keys: PublishedKeyRecord[] = [];
  if (settings.logSigner.status === "loaded") {
    const s = settings.logSigner.value;
    const origin = settings.checkpointOrigin;
    keys.push({
      public_key: { ...s.publicJwk, kid: s.kid },
      ...(origin !== null ? { checkpoint_origin: origin, note_verifier_key: noteVerifierKey(origin, s.publicJwk) } : {}),
    });
  }
  if (settings.publishedKeys.status === "loaded") keys.push(...settings.publishedKeys.value);
  return { status: 200, body: { keys } };
}

export default fp<{ settings: Settings }>(
  async (app, { settings }) => {
    app.decorate("logSigner", settings.logSigner.status === "loaded" ? settings.logSigner.value : null);
    app.decorate("keyList", buildKeyList(settings));
  },
  { name: "writ-keys" },
);
