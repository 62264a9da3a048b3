/**
 * Acknowledgements count at verify only when a party other than their signer vouches for their
 * key (docs/threat-model/parties.md):
 * - an acknowledgement of a payment-side role (`merchant`, `psp`, `issuer`) counts only when it
 *   names an organization (`id` an `org_…` id: the record stores refused it unless that
 *   organization's registered acknowledgement key signed it, src/store/ack-keys.ts) or a
 *   `domain` that publishes its key (below). One that names neither is asserted by its signer
 *   alone (whoever declared the agreement can make one) and counts as absent, so a role it
 *   stands for is missing (ACKNOWLEDGEMENT_MISSING, a STEP_UP) or outdated;
 * - an `agent` acknowledgement is the acting side's own statement and counts on its signature.
 *
 * Acknowledgements that name a `domain` count only if their key is published there.
 * An acknowledgement may carry `domain`: the domain that publishes the institution's key at
 * `/.well-known/svc-keys.json` (the spec's format: `{keys: [{public_key: <JWK>, ...}]}`). The
 * core verifies the acknowledgement's signature with its own `public_key`; who may act for the
 * role is checked here: an ack with a domain whose key (by RFC 7638 thumbprint, never by a
 * claimed `kid`) is not in that domain's list counts as absent, so the role falls back to
 * "outdated" or "missing" (ACKNOWLEDGEMENT_MISSING, a STEP_UP).
 *
 * Promises:
 * - Fetched as `<scheme>://<domain>[:<port>]/.well-known/svc-keys.json` (WRIT_ACK_DOMAIN_*),
 *   GET, no redirects followed, at most 64 KiB read, bounded by the timeout, through the
 *   outbound policy (src/http/outbound.ts: a name resolving to a loopback, private or
 *   link-local address is refused at connect time unless WRIT_OUTBOUND_* allows it). Only a
 *   plain DNS name is fetched: no IP literal in any form (`10.0.0.1`, `2130706433`, `127.1`,
 *   `[::1]`), user info, port or path in `domain`.
 * - Fail closed: a failed, slow, oversized or malformed answer publishes nothing.
 * - Cached per domain: an answer for 5 minutes, a failure for 30 seconds; concurrent lookups
 *   of one domain share one request. The re-computed ack states are cached per agreement
 *   revision and outcome, so a hot agreement costs one map lookup.
 */
import { mandateHash, ackStates, PAYMENT_PARTY_ROLES, type Acknowledgement } from "../../core/agreement/index.js";
import { isId } from "../../core/registry/index.js";
import type { HashString } from "../../core/canonical/index.js";
import type { PreparedAgreement, PreparedMandate } from "../../core/evaluate/index.js";
import { keyId, parsePublicJwk } from "../../core/jose/index.js";
import { isIpLiteral, STRICT_OUTBOUND, type OutboundPolicy, outboundRequest, type OutboundDeps } from "../../http/index.js";
import type { VerifySettings } from "../settings.js";

/** Largest key list read (bytes). */
export const MAX_KEY_LIST_BYTES = 64 * 1024;
/** How long a fetched key list is trusted (ms). */
export const KEY_LIST_TTL_MS = 5 * 60_000;
/** How long a failed fetch is remembered (ms). */
export const KEY_LIST_FAILURE_TTL_MS = 30_000;
const MAX_DOMAINS = 1000;
const MAX_STATES = 1000;

const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const DOMAIN_RE = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);

/**
 * True for a plain DNS name at most 253 characters long that is not an IP address in any form:
 * the host is read as the URL parser reads it (`2130706433` and `127.1` are 127.0.0.1, a name
 * ending in a number that is no address does not parse) and refused when that is an address.
 */
export function isFetchableDomain(domain: unknown): domain is string {
  if (typeof domain !== "string" || domain.length > 253 || !DOMAIN_RE.test(domain)) return false;
  let host: string;
  try {
    host = new URL(`http://${domain}/`).hostname;
  } catch {
    return false;
  }
  return !isIpLiteral(host) && !isIpLiteral(domain.replace(/\.$/, ""));
}

/** Fetches key lists; tests replace it. */
export type KeyListFetch = (url: string, timeoutMs: number) => Promise<unknown>;

/**
 * The default fetch under `policy`: GET, no redirects, bounded size and time; the parsed JSON.
 * Throws for anything but a 200 with a JSON body (an OutboundError for a refused destination).
 */
export function keyListFetcher(policy: OutboundPolicy, net?: OutboundDeps): KeyListFetch {
  return async (url, timeoutMs) => {
    const res = await outboundRequest(policy, { url, headers: { accept: "application/json" }, timeoutMs, maxBodyBytes: MAX_KEY_LIST_BYTES }, net);
    if (res.status !== 200) throw new Error(`key list answered ${res.status}`);
    return JSON.parse(res.body) as unknown;
  };
}

/** The key ids (`sha256:` thumbprints) a key list publishes; unusable records are skipped. */
export function publishedKeyIds(list: unknown): Set<HashString> {
  const out = new Set<HashString>();
  const keys = (list as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return out;
  for (const rec of keys) {
    try {
      out.add(keyId(parsePublicJwk((rec as { public_key?: unknown }).public_key)));
    } catch {
      // a record that is not a usable public key publishes nothing
    }
  }
  return out;
}

interface Entry {
  ids: Promise<ReadonlySet<HashString>>;
  expiresAt: number;
}

/** Options of an AckDomainDirectory. */
export interface AckDomainOptions {
  settings: Pick<VerifySettings, "ackDomainScheme" | "ackDomainPort" | "ackDomainTimeoutMs">;
  /** Where key lists may be fetched from (default: public addresses only); unused with `fetch`. */
  policy?: OutboundPolicy;
  fetch?: KeyListFetch;
  /** Clock, epoch ms (default Date.now). */
  clock?: () => number;
}

/** The domains' published keys, cached (see the module comment). */
export class AckDomainDirectory {
  private readonly domains = new Map<string, Entry>();
  private readonly states = new Map<string, PreparedMandate["acks"][]>();
  private readonly fetcher: KeyListFetch;
  private readonly clock: () => number;

  constructor(private readonly opts: AckDomainOptions) {
    this.fetcher = opts.fetch ?? keyListFetcher(opts.policy ?? STRICT_OUTBOUND);
    this.clock = opts.clock ?? Date.now;
  }

  /** The URL of `domain`'s key list. */
  urlFor(domain: string): string {
    const { ackDomainScheme, ackDomainPort } = this.opts.settings;
    const host = domain.replace(/\.$/, "").toLowerCase();
    return `${ackDomainScheme}://${host}${ackDomainPort !== null ? `:${ackDomainPort}` : ""}/.well-known/svc-keys.json`;
  }

  /** The key ids `domain` publishes (empty when it cannot be fetched). Never throws. */
  publishedKeys(domain: string): Promise<ReadonlySet<HashString>> {
    if (!isFetchableDomain(domain)) return Promise.resolve(new Set());
    const key = domain.replace(/\.$/, "").toLowerCase();
    const now = this.clock();
    const hit = this.domains.get(key);
    if (hit && hit.expiresAt > now) return hit.ids;
    const entry: Entry = { ids: Promise.resolve(new Set()), expiresAt: now + KEY_LIST_TTL_MS };
    entry.ids = this.fetcher(this.urlFor(key), this.opts.settings.ackDomainTimeoutMs).then(
      (list) => publishedKeyIds(list),
      () => {
        entry.expiresAt = this.clock() + KEY_LIST_FAILURE_TTL_MS;
        return new Set<HashString>();
      },
    );
    this.domains.delete(key);
    this.domains.set(key, entry);
    while (this.domains.size > MAX_DOMAINS) {
      const oldest = this.domains.keys().next();
      if (oldest.done) break;
      this.domains.delete(oldest.value);
    }
    return entry.ids;
  }

  /**
   * `prepared` with the acknowledgement states re-computed without the acks no other party
   * vouches for (`selfAsserted`) and those whose domain does not publish their key; `prepared`
   * itself when every ack is kept. `revision` keys the cache of re-computed states.
   */
  async apply(prepared: PreparedAgreement, revision: number): Promise<PreparedAgreement> {
    const acks = prepared.agreement.acknowledgements;
    if (!Array.isArray(acks) || !acks.some((a) => typeof a?.domain === "string" || selfAsserted(a))) return prepared;
    const kept: Acknowledgement[] = [];
    const dropped: number[] = [];
    for (const [i, ack] of acks.entries()) {
      if (selfAsserted(ack)) {
        dropped.push(i);
        continue;
      }
      if (typeof ack?.domain !== "string") {
        kept.push(ack);
        continue;
      }
      const published = await this.publishedKeys(ack.domain);
      let kid: HashString | undefined;
      try {
        kid = keyId(parsePublicJwk(ack.public_key));
      } catch {
        kid = undefined;
      }
      if (kid !== undefined && published.has(kid)) kept.push(ack);
      else dropped.push(i);
    }
    if (dropped.length === 0) return prepared;
    const id = prepared.agreement.agreement_id;
    const cacheKey = `${id}\u0000${revision}\u0000${dropped.join(",")}`;
    let states = this.states.get(cacheKey);
    if (!states) {
      states = await Promise.all(prepared.mandates.map((m) => recompute(m, prepared, kept)));
      this.states.set(cacheKey, states);
      while (this.states.size > MAX_STATES) {
        const oldest = this.states.keys().next();
        if (oldest.done) break;
        this.states.delete(oldest.value);
      }
    }
    const fresh = states;
    return { ...prepared, mandates: prepared.mandates.map((m, i) => ({ ...m, acks: fresh[i] ?? m.acks })) };
  }
}

/**
 * True for an acknowledgement of a payment-side role that names neither an organization (`id`
 * an `org_…` id) nor a `domain`: only its own signer vouches for it, so it never counts.
 */
export function selfAsserted(ack: Acknowledgement | undefined): boolean {
  return typeof ack === "object" && ack !== null && PAYMENT_PARTY_ROLES.has(ack.role) && typeof ack.domain !== "string" && !isId("org", ack.id);
}

async function recompute(m: PreparedMandate, prepared: PreparedAgreement, kept: readonly Acknowledgement[]): Promise<PreparedMandate["acks"]> {
  if (m.acks.length === 0) return m.acks;
  const history: HashString[] = [];
  for (const h of prepared.agreement.mandate_history ?? []) {
    try {
      if (h.intent_id === m.mandate.intent_id) history.push(mandateHash(h));
    } catch {
      // an unhashable earlier version matches nothing
    }
  }
  try {
    return await ackStates(m.mandate, m.hash, kept, history, prepared.agreement.agreement_id);
  } catch {
    return m.acks.map((a) => ({ role: a.role, state: "missing" as const }));
  }
}
