/**
 * The admission webhook's one read (for a warning, never a refusal): whether a record id a new
 * resource declares was already revoked for the organization its namespace is bound to. The
 * revoked ids are in memory (`revoked`, the controller's revocation index, by organization and
 * id), so an id that is not revoked costs no query and a create is never held up by Postgres; only a revoked one (or any,
 * before the index has loaded) is read. A lookup slower than `timeoutMs`, or failing, gives no
 * warning.
 */
import type { Pool } from "pg";
import { loadDelegation, agreementRow } from "../../store/index.js";
import type { NamespaceBindings } from "../../sources/kubernetes/index.js";
import type { AdmissionLookup, RevokedRecord } from "./review.js";

/** What the lookup asks of the revocation index. */
export interface RevokedIds {
  /** The delegation `id` of organization `org` is revoked. */
  isDelegationRevoked(org: string | null, id: string): boolean;
  /** The agreement `id` of organization `org` is revoked. */
  isAgreementRevoked(org: string | null, id: string): boolean;
  /** True until its first load (then it cannot say "not revoked"). */
  stale(): boolean;
}

/** The lookup over the controller's pool and namespace bindings (only `labelledOrg` is asked). */
export function admissionLookup(pool: Pool, bindings: Pick<NamespaceBindings, "labelledOrg">, revoked?: RevokedIds, timeoutMs = 500): AdmissionLookup {
  const read = async (kind: "delegation" | "agreement", id: string, namespace: string): Promise<RevokedRecord | undefined> => {
    const org = await bindings.labelledOrg(namespace);
    if (org === undefined) return undefined;
    // The id within the namespace's organization (an id names a record there only).
    if (revoked && !revoked.stale() && !(kind === "delegation" ? revoked.isDelegationRevoked(org, id) : revoked.isAgreementRevoked(org, id))) return undefined;
    const row = kind === "delegation" ? await loadDelegation(pool, id, undefined, org) : await agreementRow(pool, id, org);
    if (!row || !row.revokedAt) return undefined;
    return { revokedAt: row.revokedAt, reason: row.revokedReason };
  };
  return {
    revoked(kind, id, namespace) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
      return Promise.race([read(kind, id, namespace).catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
    },
  };
}
