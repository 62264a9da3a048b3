/**
 * Signed agent requests in `writ/client` (RFC 9421 with the Web Bot Auth parameters;
 * docs/how-to/merchant-verify-agent.md, docs/reference/request-signatures.md).
 *
 * An agent signs: `signAgentRequest(request, {key, server})` answers the `Signature`,
 * `Signature-Input` and `Signature-Agent` fields to add (the agent's registered private JWK,
 * Ed25519 or P-256; `Signature-Agent` names Writ's key directory).
 *
 * A merchant checks offline: `KeyDirectoryCache` fetches Writ's key directory, checks its
 * signature with Writ's log key and keeps it until its signature expires (at most 300 s: a
 * suspended agent's key leaves the cache within that); `verifyAgentRequest(request, {directory})`
 * then answers `{verified, reason?, agent?}` with no call to Writ. Replays are refused with a
 * nonce store: `MemoryNonceStore` for one process, or your own shared one. The online check,
 * `POST /v1/agents/verify-request`, also answers status, trust score and a live grant.
 *
 * ```ts
 * const headers = await signAgentRequest({ method: "GET", url, headers: {} }, { key: privateJwk, server: "https://writ.example" });
 * const directory = new KeyDirectoryCache({ server: "https://writ.example" });
 * const answer = await verifyAgentRequest({ method, url, headers }, { directory });
 * ```
 */
import {
  CLOCK_SKEW_SECONDS,
  DIRECTORY_PATH,
  checkSignature,
  signRequest,
  verifyDirectory,
  type DirectoryKey,
  type HttpRequestLike,
  type KeyDirectory,
  type SignatureFacts,
  type SignatureFields,
} from "../core/httpsig/index.js";
import { parsePublicJwk, signerFromJwk, type PublicJwk } from "../core/jose/index.js";

export type { DirectoryKey, HttpRequestLike, KeyDirectory, SignatureFacts, SignatureFields };

/** The URL of the key directory of the Writ server at `server`. */
export function keyDirectoryUrl(server: string | URL): string {
  return `${String(server).replace(/\/+$/, "")}${DIRECTORY_PATH}`;
}

/** Options of `signAgentRequest`. */
export interface SignAgentRequestOptions {
  /** The agent's private JWK (Ed25519 or P-256), whose public half is registered in Writ. */
  key: Record<string, unknown>;
  /** The Writ server whose directory lists the key (sent as Signature-Agent). */
  server: string | URL;
  /** Lifetime of the signature in seconds (default 60, at most 300). */
  lifetimeSeconds?: number;
  /** Components to cover besides `@authority` and `signature-agent` (e.g. `@method`, `@path`). */
  components?: string[];
  /** When the signature is made (default now). */
  created?: Date;
  /** The nonce (default 64 random bytes, base64). */
  nonce?: string;
}

/** The header fields that sign `request` as the agent (see the module comment). */
export async function signAgentRequest(request: HttpRequestLike, opts: SignAgentRequestOptions): Promise<SignatureFields> {
  return signRequest(request, {
    signer: signerFromJwk(opts.key),
    directoryUrl: keyDirectoryUrl(opts.server),
    components: opts.components ?? ["@method", "@path"],
    ...(opts.lifetimeSeconds !== undefined ? { lifetimeSeconds: opts.lifetimeSeconds } : {}),
    ...(opts.created !== undefined ? { created: opts.created } : {}),
    ...(opts.nonce !== undefined ? { nonce: opts.nonce } : {}),
  });
}

/** A key directory answer refused (reason KEY_DIRECTORY_INVALID), or one that could not be fetched. */
export class KeyDirectoryError extends Error {
  override readonly name = "KeyDirectoryError";
  readonly reason = "KEY_DIRECTORY_INVALID";
}

type Fetch = (request: Request) => Promise<Response>;

/** Options of `KeyDirectoryCache`. */
export interface KeyDirectoryCacheOptions {
  /** The Writ server. */
  server: string | URL;
  /**
   * Writ's log public key, which signs the directory. Pin it (from /.well-known/svc-keys.json,
   * read once over a channel you trust); without it, it is read from that list on first use.
   */
  writKey?: object;
  fetch?: Fetch;
  /** The clock, ms since the epoch (default Date.now). */
  now?: () => number;
}

/** Writ's key directory, fetched, checked and kept until its signature expires. */
export class KeyDirectoryCache {
  private current: { directory: KeyDirectory; expires: number; byKid: Map<string, DirectoryKey> } | undefined;
  private writKey: PublicJwk | undefined;
  private readonly fetchFn: Fetch;
  private readonly now: () => number;
  readonly url: string;

  constructor(private readonly opts: KeyDirectoryCacheOptions) {
    this.url = keyDirectoryUrl(opts.server);
    this.fetchFn = opts.fetch ?? ((r) => fetch(r));
    this.now = opts.now ?? Date.now;
    if (opts.writKey !== undefined) this.writKey = parsePublicJwk(opts.writKey);
  }

  private async logKey(): Promise<PublicJwk> {
    if (this.writKey) return this.writKey;
    const r = await this.fetchFn(new Request(`${String(this.opts.server).replace(/\/+$/, "")}/.well-known/svc-keys.json`));
    if (!r.ok) throw new KeyDirectoryError(`/.well-known/svc-keys.json answered ${r.status}`);
    const list = (await r.json()) as { keys?: Array<{ public_key?: unknown; checkpoint_origin?: unknown }> };
    const log = list.keys?.find((k) => k.checkpoint_origin !== undefined) ?? list.keys?.[0];
    if (!log) throw new KeyDirectoryError("/.well-known/svc-keys.json lists no log key");
    return (this.writKey = parsePublicJwk(log.public_key));
  }

  /** Fetches and checks the directory now (throws KeyDirectoryError when it is refused). */
  async refresh(): Promise<KeyDirectory> {
    const writKey = await this.logKey();
    const r = await this.fetchFn(new Request(this.url, { headers: { accept: "application/http-message-signatures-directory+json" } }));
    if (!r.ok) throw new KeyDirectoryError(`${this.url} answered ${r.status}`);
    const check = await verifyDirectory(
      { url: this.url, headers: Object.fromEntries(r.headers.entries()), body: await r.text() },
      { writKey, nowMs: this.now() },
    );
    if (!check.ok) throw new KeyDirectoryError(check.message);
    this.current = { directory: check.directory, expires: check.expires, byKid: new Map(check.directory.keys.map((k) => [k.kid, k])) };
    return check.directory;
  }

  /** The key a keyid names in the directory (fetched again once its signature expired). */
  async key(keyid: string): Promise<DirectoryKey | undefined> {
    if (!this.current || this.current.expires * 1000 <= this.now()) await this.refresh();
    return this.current?.byKid.get(keyid);
  }
}

/** Where nonces are remembered: true when the nonce is new (and is now claimed until `keepUntilMs`). */
export interface NonceStore {
  claim(keyid: string, nonce: string, keepUntilMs: number): boolean | Promise<boolean>;
}

/** A nonce store for one process: forgets a nonce after its signature expired (at most `max` kept). */
export class MemoryNonceStore implements NonceStore {
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly max = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  claim(keyid: string, nonce: string, keepUntilMs: number): boolean {
    const now = this.now();
    const k = `${keyid} ${nonce}`;
    const until = this.seen.get(k);
    if (until !== undefined && until >= now) return false;
    // Oldest first (insertion order): drop what expired, and the oldest beyond `max`.
    for (const [key, u] of this.seen) {
      if (u >= now && this.seen.size < this.max) break;
      this.seen.delete(key);
    }
    this.seen.set(k, keepUntilMs);
    return true;
  }
}

/** The answer of `verifyAgentRequest`. */
export interface AgentRequestCheck {
  verified: boolean;
  /** Why not: a reason code of docs/reasons.md (absent when verified). */
  reason?:
    | "REQUEST_SIGNATURE_MISSING"
    | "REQUEST_SIGNATURE_MALFORMED"
    | "REQUEST_SIGNATURE_EXPIRED"
    | "REQUEST_KEY_UNKNOWN"
    | "REQUEST_SIGNATURE_INVALID"
    | "REQUEST_NONCE_REPLAYED"
    | "KEY_DIRECTORY_INVALID";
  message?: string;
  /** The agent the directory lists for the key. */
  agent?: { agent_id: string; operator_org_id: string; verification_level?: string };
  signature?: SignatureFacts;
}

/** Options of `verifyAgentRequest`. */
export interface VerifyAgentRequestOptions {
  /** Writ's key directory (a cache, or a directory already checked). */
  directory: KeyDirectoryCache | KeyDirectory;
  /** Refuses replays when given (a store shared by your verifiers, or a MemoryNonceStore). */
  nonces?: NonceStore;
  /** The clock, ms since the epoch (default Date.now()). */
  nowMs?: number;
}

/**
 * Checks a request an agent signed, offline, against Writ's key directory (see the module
 * comment): the signature (its reason when refused), then the nonce when `nonces` is given.
 */
export async function verifyAgentRequest(request: HttpRequestLike, opts: VerifyAgentRequestOptions): Promise<AgentRequestCheck> {
  const dir = opts.directory;
  const nowMs = opts.nowMs ?? Date.now();
  let directoryProblem: string | undefined;
  const keyFor = async (kid: string) => {
    if (!(dir instanceof KeyDirectoryCache)) return dir.keys.find((k) => k.kid === kid);
    try {
      return await dir.key(kid);
    } catch (e) {
      directoryProblem = e instanceof Error ? e.message : String(e);
      return undefined;
    }
  };
  const check = await checkSignature(
    { request },
    { keyFor, jwkOf: (k) => parsePublicJwk({ kty: k.kty, crv: k.crv, x: k.x, ...("y" in k ? { y: k.y } : {}) }), nowMs },
  );
  if (directoryProblem !== undefined) return { verified: false, reason: "KEY_DIRECTORY_INVALID", message: directoryProblem };
  if (!check.ok) return { verified: false, reason: check.code, message: check.message, ...(check.facts ? { signature: check.facts } : {}) };
  const agent = {
    agent_id: check.key.agent_id,
    operator_org_id: check.key.operator_org_id,
    ...(check.key.verification_level !== undefined ? { verification_level: check.key.verification_level } : {}),
  };
  if (opts.nonces && !(await opts.nonces.claim(check.facts.keyid, check.facts.nonce, (check.facts.expires + CLOCK_SKEW_SECONDS) * 1000))) {
    return {
      verified: false,
      reason: "REQUEST_NONCE_REPLAYED",
      message: `nonce of signature ${check.facts.label} was already presented for key ${check.facts.keyid}`,
      agent,
      signature: check.facts,
    };
  }
  return { verified: true, agent, signature: check.facts };
}
