/**
 * The admission webhook's one read (for a warning, never a refusal): whether a record id a new
 * resource declares was already revoked for the organization its namespace is bound to. A
 * lookup slower than `timeoutMs`, or failing, gives no warning.
 */
import type { Pool } from "pg";
import { loadDelegation } from "../../store/delegations.js";
import { agreementRow } from "../../store/status-reads.js";
import type { NamespaceBindings } from "../../sources/kubernetes/namespace-binding.js";
import type { AdmissionLookup, RevokedRecord } from "./review.js";

/** The lookup over the controller's pool and namespace bindings. */
export function admissionLookup(pool: Pool, bindings: NamespaceBindings, timeoutMs = 1000): AdmissionLookup {
  const read = async (kind: "delegation" | "agreement", id: string, namespace: string): Promise<RevokedRecord | undefined> => {
    const org = await bindings.labelledOrg(namespace);
    if (org === undefined) return undefined;
    const row = kind === "delegation" ? await loadDelegation(pool, id) : await agreementRow(pool, id);
    if (!row || row.orgId !== org || !row.revokedAt) return undefined;
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
