/**
 * Revocations announced in Postgres (`LISTEN writ_revocations`: the HTTP revocation paths,
 * another replica, the controller's own) queue the resources whose records they name, so
 * `.status` says "revoked" within a reconcile of the revocation, not at the next resync. A
 * delegation's revocation also queues the Delegations whose chain names it and the
 * IntentAgreements bound to them. Revocation is final, so a missed announcement (a reconnect)
 * only delays the status until the periodic resync; nothing is re-read on reconnect for that.
 *
 * The same connection feeds a revocation index (the data plane's, src/verify/revocation): the
 * revoked ids, loaded at every (re)connection, so the admission webhook's warning for a revoked
 * id needs no query for the ids that are not revoked (nearly all of them).
 */
import { RevocationChannel } from "../../store/index.js";
import type { Pool } from "pg";
import { RevocationIndex } from "../../verify/index.js";
import { delegationIdOf, enqueueAgreementsOf, enqueueBelow, type ReconcileContext } from "../reconcilers/context.js";
import { storedRecordId } from "../resource-writes.js";
import type { Logger } from "../log.js";

/** A running follower. */
export interface RevocationFollower {
  /** The revoked ids (stale until its first load: then ask Postgres). */
  readonly index: RevocationIndex;
  stop(): Promise<void>;
}

/** Starts following the announcements on `databaseUrl` (see the module comment). */
export function followRevocations(databaseUrl: string, pool: Pool, ctx: ReconcileContext, log: Logger): RevocationFollower {
  const channel = new RevocationChannel({
    connection: databaseUrl,
    applicationName: "writ-controller-revocations",
    maxBackoffMs: 10_000,
    workerNotices: false,
  });
  const index = new RevocationIndex({ db: pool, source: channel });
  index.on("failure", (err) => log.debug("revoked ids did not load; retrying", { error: err.message }));
  channel.on("revoked", (a) => {
    const ids = new Set(a.ids);
    if (a.kind === "delegation") {
      for (const d of ctx.caches.delegations.list()) {
        const id = storedRecordId(d) ?? delegationIdOf(d);
        if (id === undefined || !ids.has(id)) continue;
        const ns = d.metadata.namespace ?? "";
        ctx.enqueue.delegation(`${ns}/${d.metadata.name}`);
        enqueueAgreementsOf(ctx, ns, d.metadata.name);
      }
      for (const id of ids) enqueueBelow(ctx, id);
      return;
    }
    for (const r of ctx.caches.agreements.list()) {
      const id = storedRecordId(r) ?? (r.spec as { agreement_id?: unknown } | undefined)?.agreement_id;
      if (typeof id === "string" && ids.has(id)) ctx.enqueue.agreement(`${r.metadata.namespace ?? ""}/${r.metadata.name}`);
    }
  });
  channel.on("disconnected", ({ error, retryInMs }) => log.debug("revocation announcements disconnected", { error: error.message, retryInMs }));
  void index.start();
  return { index, stop: () => index.stop() };
}
