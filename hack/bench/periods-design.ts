/**
 * A storage design for limits per period, measured before it is built (`npm run
 * bench:periods-batch` with BENCH_PERIODS_DESIGN=1; docs/operations/benchmarks.md): the owners'
 * counters on rows the spend transaction already locks, not a row per window.
 *
 * What the store does now (migrations/0430_period_limits.sql, 0600_period_hour_buckets.sql):
 * a counter row per calendar window and per hour (period_spend), read by a statement of its own
 * and raised one row each; an event row per spend and per owner (period_events, a wide key and
 * a partial index on (agent, owner, currency, at)); the delegation's row locked for a
 * delegation's windows. The design measured here, for BENCH_PERIODS=1's four limits (the
 * intent's day, month and rolling 24 hours, the delegation's week):
 *   - the intent's windows, with the hour counters of its rolling window, in one jsonb on its
 *     agreement_spend row, which the spend read reads and the spend write updates already;
 *   - the delegation's windows in one row of its own (agent, owner, currency), locked and read
 *     by the spend read, updated by the spend write, in place of the delegation row's lock;
 *   - one event per spend (each owner's share in one jsonb: what a release gives back), its key
 *     (agent, agreement, action) and a BRIN of keep_until;
 *   - `rows`: exact rolling windows, so the event is also indexed by (agent, agreement, at),
 *     and the spend read sums the events of the hour at the window's start and finds the
 *     oldest (two probes a spend);
 *   - `rows-hourly`: rolling windows counted in whole UTC hours (a payment counts until the
 *     end of its hour plus the window: never less than the exact rule), so no event is read.
 * The prototype installs a column, three tables and the two spend functions re-created with
 * the design's statements added (`designSql`, from the functions in src/store/sql/functions),
 * in the bench's own scratch database: those statements run for the design's agents alone
 * (their agent ids start with `agent-rows`), whose agreements have no limits per period the
 * store knows of, so the store's own period work does not run for them. The states it writes
 * are constant JSON of the real size (two calendar windows and 24 hour counters; a week),
 * built at run time so that Postgres parses them on every write as it would parse the
 * store's. What it leaves out: writ serve's work (building the states), releases, retention.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The design's sides: their names are the agent id prefixes the installed statements test. */
export const DESIGN_SIDES = ["rows", "rows-hourly"] as const;
export type DesignSide = (typeof DESIGN_SIDES)[number];

const FUNCTIONS = join(fileURLToPath(new URL(".", import.meta.url)), "../../src/store/sql/functions");

/** `text` with `marker` replaced by `by`; throws when `marker` is not found exactly once (the function changed: update the prototype). */
function patch(text: string, marker: string, by: string): string {
  const at = text.indexOf(marker);
  if (at < 0 || text.indexOf(marker, at + 1) >= 0) throw new Error(`periods-design: "${marker.slice(0, 60)}" is not in the function exactly once`);
  return text.slice(0, at) + by + text.slice(at + marker.length);
}

/** The intent's state as the design keeps it: two calendar windows and 24 hour counters (constant figures, the real size). */
function intentState(): string {
  const hours = Array.from({ length: 24 }, (_, i) => [1_764_400_000_000 + i * 3_600_000, String(1_234_500 + i), 17 + i]);
  const state = { day: ["2026-11-29T23:00:00Z", "1234567", 123], month: ["2026-11-30T23:00:00Z", "12345678", 1234], rolling: hours };
  // Without its opening brace: the statement prepends a member computed per row, so that the
  // text is parsed on every write.
  return JSON.stringify(state).slice(1).replaceAll("'", "''");
}

const SHARES = `"USD","100","100",[["day","2026-11-29T23:00:00Z"],["month","2026-11-30T23:00:00Z"],["hour","2026-11-29T18:00:00Z"]]],["delegation","del-x","USD","100","100",[["week","2026-11-30T05:00:00Z"]]]]`;

/** The SQL that installs the design's prototype (see the module comment). */
export function designSql(): string {
  let read = readFileSync(join(FUNCTIONS, "writ_spend_read.sql"), "utf8");
  let write = readFileSync(join(FUNCTIONS, "writ_spend_write.sql"), "utf8");
  const lockOwners = (extra: string) => `
    PERFORM 1 FROM (SELECT DISTINCT s.ag, s.agreement_id FROM jsonb_to_recordset(p_spends) AS s(ag text, agreement_id text) ORDER BY 1, 2) k
    CROSS JOIN LATERAL (SELECT o.state FROM period_design_owners o WHERE o.agent_id = k.ag AND o.owner = 'd:' || k.agreement_id AND o.currency = 'USD' LIMIT 1 FOR NO KEY UPDATE) l${extra};`;
  read = patch(
    read,
    "  RETURN QUERY\n  SELECT s.i,",
    `  IF (p_spends->0->>'ag') LIKE 'agent-rows-hourly-%' THEN${lockOwners("")}
  ELSIF (p_spends->0->>'ag') LIKE 'agent-rows-%' THEN${lockOwners(`
    CROSS JOIN LATERAL (SELECT coalesce(sum(e.amount), 0) AS spent, count(*) AS n FROM period_design_events e
                        WHERE e.agent_id = k.ag AND e.agreement_id = k.agreement_id AND e.at > now() - interval '24 hours'
                          AND e.at < date_trunc('hour', now() - interval '24 hours', 'UTC') + interval '1 hour') r
    CROSS JOIN LATERAL (SELECT min(e.at) AS oldest FROM period_design_events e
                        WHERE e.agent_id = k.ag AND e.agreement_id = k.agreement_id AND e.at > now() - interval '24 hours') f`)}
  END IF;
  RETURN QUERY
  SELECT s.i,`,
  );
  write = patch(
    write,
    "DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor;",
    `DO UPDATE SET spent_minor = t.spent_minor + EXCLUDED.spent_minor,
    periods = CASE WHEN t.agent_id LIKE 'agent-rows%' THEN ('{"n":' || length(t.agreement_id) || ',${intentState()}')::jsonb ELSE t.periods END;`,
  );
  const writes = (table: string) => `
    UPDATE period_design_owners o SET state = ('{"n":' || length(r.a) || ',"week":["2026-11-30T05:00:00Z","123456789",1234]}')::jsonb
    FROM jsonb_to_recordset(p_rows) AS r(ag text, a text) WHERE o.agent_id = r.ag AND o.owner = 'd:' || r.a AND o.currency = 'USD';
    INSERT INTO ${table} (agent_id, agreement_id, action_id, at, amount, shares, keep_until)
    SELECT r.ag, r.a, r.e->>'action_id', now(), r.m, ('[["intent",' || length(r.a) || ',${SHARES}')::jsonb, now() + interval '8 days'
    FROM jsonb_to_recordset(p_rows) AS r(ag text, a text, e jsonb, m bigint);`;
  write = patch(
    write,
    "  RETURN QUERY\n  WITH stored AS (",
    `  IF (p_rows->0->>'ag') LIKE 'agent-rows-hourly-%' THEN${writes("period_design_shares")}
  ELSIF (p_rows->0->>'ag') LIKE 'agent-rows-%' THEN${writes("period_design_events")}
  END IF;
  RETURN QUERY
  WITH stored AS (`,
  );
  const events = (
    table: string,
  ) => `CREATE TABLE ${table} (agent_id text NOT NULL, agreement_id text NOT NULL, action_id text NOT NULL, at timestamptz NOT NULL,
  amount bigint NOT NULL, shares jsonb NOT NULL, keep_until timestamptz, PRIMARY KEY (agent_id, agreement_id, action_id));
CREATE INDEX ON ${table} USING brin (keep_until);`;
  return `ALTER TABLE agreement_spend ADD COLUMN periods jsonb;
CREATE TABLE period_design_owners (agent_id text, owner text, currency text, state jsonb NOT NULL, PRIMARY KEY (agent_id, owner, currency));
${events("period_design_shares")}
${events("period_design_events")}
CREATE INDEX ON period_design_events (agent_id, agreement_id, at);
${read}
${write}`;
}

/** The SQL that gives a design side's agreement its delegation's row (before its first spend). */
export const DESIGN_OWNER_SQL = "INSERT INTO period_design_owners (agent_id, owner, currency, state) VALUES ($1, 'd:' || $2, 'USD', '{}')";
