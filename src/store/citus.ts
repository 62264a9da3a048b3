/**
 * Writ on a Citus cluster (docs/scale.md): after the migrations, on a database where the `citus`
 * extension is installed and which is the cluster's coordinator, the shared tables that no
 * per-agent table is linked to are made Citus reference tables (a copy on every node, written
 * on all of them in one transaction). On plain Postgres (no `citus` extension) nothing happens:
 * the same migrations and code run on both.
 *
 * What is distributed now, and what is not yet (docs/scale.md, "What runs on Citus today"):
 * only `CITUS_REFERENCE_TABLES`. Every other table stays a plain table on the coordinator. The
 * other shared tables (organizations, API keys, agents, issuer and acknowledgement keys) cannot
 * be reference tables yet: their change-notice triggers are shard-safe now (they NOTIFY from the
 * coordinator's copy only: writ_notify_here, migrations/0350_citus_notices.sql), and Citus
 * accepts them, but a foreign-key path (orgs <- issuer_keys <- mandates -> delegations,
 * agreements -> ledger, spend totals) makes Citus turn the per-agent tables into "Citus local
 * tables", where the spend transaction's PL/pgSQL functions are refused ("could not create
 * distributed plan", measured with test/integration/citus.test.ts): every ALLOW would fail.
 * They follow once the per-agent tables carry agent_id in their keys and the spend SQL names it.
 *
 * Setting: WRIT_CITUS = `auto` (default: lay the tables out when Citus is there), `off` (never:
 * the tables stay plain local tables even on a Citus coordinator).
 */
import type { ClientBase } from "pg";

/** The reference tables without triggers or foreign keys: exchange rates and the delegation revocation markers. */
export const CITUS_REFERENCE_TABLES = ["fx_rates", "delegation_revocations"] as const;

/** WRIT_CITUS. */
export type CitusMode = "auto" | "off";

/** WRIT_CITUS of `env`; an unknown value throws (it names the variable and what it accepts). */
export function citusModeFromEnv(env: NodeJS.ProcessEnv): CitusMode {
  const raw = env.WRIT_CITUS?.trim();
  if (raw === undefined || raw === "" || raw === "auto") return "auto";
  if (raw === "off") return "off";
  throw new Error(`WRIT_CITUS must be auto or off, not ${JSON.stringify(raw.slice(0, 40))}`);
}

/** What `applyCitusLayout` found and did. */
export interface CitusLayout {
  /** The citus extension's version in this database, or null (plain Postgres). */
  citus: string | null;
  /** Whether this database is the cluster's coordinator (false without Citus). */
  coordinator: boolean;
  /** Tables made reference tables by this call. */
  madeReference: string[];
}

/**
 * Makes `CITUS_REFERENCE_TABLES` reference tables when Citus is installed here and this is the
 * coordinator; tables that already are (a second process, a restart) are left as they are.
 * Runs in one transaction on `client` (the caller holds the migration lock).
 */
export async function applyCitusLayout(client: ClientBase, mode: CitusMode): Promise<CitusLayout> {
  const { rows } = await client.query<{ v: string | null }>("SELECT (SELECT extversion FROM pg_extension WHERE extname = 'citus') AS v");
  const citus = rows[0]?.v ?? null;
  if (citus === null || mode === "off") return { citus, coordinator: false, madeReference: [] };
  const coord = await client.query<{ c: boolean }>("SELECT citus_is_coordinator() AS c");
  if (coord.rows[0]?.c !== true) return { citus, coordinator: false, madeReference: [] };
  const madeReference: string[] = [];
  await client.query("BEGIN");
  try {
    for (const table of CITUS_REFERENCE_TABLES) {
      const { rowCount } = await client.query("SELECT 1 FROM pg_dist_partition WHERE logicalrelid = $1::regclass AND partmethod = 'n' AND repmodel = 't'", [
        table,
      ]);
      if (rowCount) continue;
      await client.query("SELECT create_reference_table($1)", [table]);
      madeReference.push(table);
    }
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  }
  return { citus, coordinator: true, madeReference };
}
