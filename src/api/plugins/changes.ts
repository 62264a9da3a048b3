/**
 * The process's LISTEN connection (src/store/revocation/channel.ts): revocations for the
 * revocation index, change notices for the in-memory caches (verify snapshots, API key
 * credentials). Decorates `app.changeFeed` (null without a database). Building it does no I/O:
 * the verify runtime starts it on ready (with the revocation index) and stops it in preClose.
 */
import fp from "fastify-plugin";
import type { ClientConfig } from "pg";
import { RevocationChannel } from "../../store/index.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The LISTEN connection on `writ_revocations` and `writ_changes`, or null without a database. */
    readonly changeFeed: RevocationChannel | null;
  }
}

export default fp(
  async (app) => {
    const pool = app.pool;
    let feed: RevocationChannel | null = null;
    if (pool) {
      const connection: string | ClientConfig = app.settings.databaseUrl ?? { ...(pool as unknown as { options: ClientConfig }).options };
      feed = new RevocationChannel({ connection });
    }
    app.decorate("changeFeed", feed);
  },
  { name: "writ-changes", dependencies: ["writ-db"] },
);
