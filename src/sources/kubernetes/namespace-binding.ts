/**
 * Namespaces are tenants: a namespace is bound to one registry organization by its label
 * `writ.dev/org-id: org_<24 hex>`, and only an organization that exists and is active in the
 * registry (`orgs`) can be bound. A resource in a namespace without a valid binding is not
 * stored (NAMESPACE_NOT_BOUND, condition `Bound`).
 *
 * The namespace is read with GET (RBAC: `get` on `namespaces`; no list or watch needed, so it
 * works with per-namespace Roles) and cached for `ttlMs` (default 10 s), as is each
 * organization's row, so a burst of reconciles in one namespace costs one read of each.
 * Namespace labels are not watched: a resource refused for its binding is retried every 30 s
 * (`UNBOUND_RETRY_MS`), so labelling a namespace takes effect within that. The organization an
 * agent is registered to (`agentOrg`) is cached the same way.
 */
import type { Org } from "../../store/index.js";
import type { KubeTransport } from "./client.js";
import { isKubeError } from "./errors.js";
import { resourcePath, type KubeObject } from "./objects.js";
import type { Clock } from "../../core/time/index.js";

/** The namespace label naming the organization. */
export const ORG_LABEL = "writ.dev/org-id";
/** Retry interval of resources refused for their namespace's binding. */
export const UNBOUND_RETRY_MS = 30_000;
/** The shape of a registry organization id (the `orgs` table's check). */
export const ORG_ID_PATTERN = /^org_[0-9a-f]{24}$/;

/** A namespace's binding: the organization, or why there is none. */
export type Binding = { ok: true; orgId: string } | { ok: false; message: string };

/** The binding from a namespace's labels and the organization row it names (pure). */
export function bindingFor(namespace: string, labels: Readonly<Record<string, string>> | undefined, org: Org | undefined): Binding {
  const id = labels?.[ORG_LABEL];
  if (id === undefined) return { ok: false, message: `namespace ${namespace} has no ${ORG_LABEL} label naming its registry organization` };
  if (!ORG_ID_PATTERN.test(id))
    return { ok: false, message: `namespace ${namespace}'s label ${ORG_LABEL} (${JSON.stringify(id)}) is not an organization id (org_ and 24 hex digits)` };
  if (!org) return { ok: false, message: `namespace ${namespace} is bound to ${id}, which is not a registered organization` };
  if (org.status !== "active") return { ok: false, message: `namespace ${namespace} is bound to ${id}, which is ${org.status}, not active` };
  return { ok: true, orgId: id };
}

/** Reads of the registry's organizations (`getOrg`). */
export type OrgLookup = (orgId: string) => Promise<Org | undefined>;
/** The organization an agent is registered to (undefined: not registered). */
export type AgentOrgLookup = (agentId: string) => Promise<string | undefined>;

interface Cached<T> {
  value: T;
  at: number;
}

/** Resolves and caches namespace bindings (see the module comment). */
export class NamespaceBindings {
  private readonly labels = new Map<string, Cached<Record<string, string> | undefined>>();
  private readonly orgs = new Map<string, Cached<Org | undefined>>();
  private readonly agents = new Map<string, Cached<string | undefined>>();
  /** GETs in flight, so concurrent misses of one namespace (a burst of creates) share one request. */
  private readonly reading = new Map<string, Promise<Record<string, string> | undefined>>();

  constructor(
    private readonly client: KubeTransport,
    private readonly getOrg: OrgLookup,
    private readonly clock: Clock,
    private readonly ttlMs = 10_000,
    private readonly getAgentOrg: AgentOrgLookup = async () => undefined,
  ) {}

  /** The organization `agentId` is registered to, or undefined (cached for the TTL). */
  async agentOrg(agentId: string): Promise<string | undefined> {
    const now = this.clock.now();
    const hit = this.agents.get(agentId);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = await this.getAgentOrg(agentId);
    this.agents.set(agentId, { value, at: now });
    return value;
  }

  /** The labels of `namespace` (undefined when it does not exist). Throws KubeApiError when the API server fails. */
  async namespaceLabels(namespace: string): Promise<Record<string, string> | undefined> {
    const now = this.clock.now();
    const hit = this.labels.get(namespace);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const inFlight = this.reading.get(namespace);
    if (inFlight) return inFlight;
    const read = this.readLabels(namespace, now).finally(() => this.reading.delete(namespace));
    this.reading.set(namespace, read);
    return read;
  }

  private async readLabels(namespace: string, now: number): Promise<Record<string, string> | undefined> {
    let value: Record<string, string> | undefined;
    try {
      const ns = await this.client.request<KubeObject>("GET", resourcePath({ group: "", version: "v1", plural: "namespaces" }, namespace));
      value = ns.metadata.labels ?? {};
    } catch (err) {
      if (!isKubeError(err, "NOT_FOUND")) throw err;
      value = undefined;
    }
    this.labels.set(namespace, { value, at: now });
    return value;
  }

  private async org(id: string): Promise<Org | undefined> {
    const now = this.clock.now();
    const hit = this.orgs.get(id);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = await this.getOrg(id);
    this.orgs.set(id, { value, at: now });
    return value;
  }

  /** The binding of `namespace` now. */
  async resolve(namespace: string): Promise<Binding> {
    const labels = await this.namespaceLabels(namespace);
    if (labels === undefined) return { ok: false, message: `namespace ${namespace} does not exist` };
    const id = labels[ORG_LABEL];
    const org = id !== undefined && ORG_ID_PATTERN.test(id) ? await this.org(id) : undefined;
    return bindingFor(namespace, labels, org);
  }

  /** The organization id the namespace's label names (well-formed), whether or not it is active: what a finalizer checks. */
  async labelledOrg(namespace: string): Promise<string | undefined> {
    const id = (await this.namespaceLabels(namespace))?.[ORG_LABEL];
    return id !== undefined && ORG_ID_PATTERN.test(id) ? id : undefined;
  }
}
