/**
 * Metrics of the verify path, on the app's registry:
 *
 * - `writ_verdicts_total{verdict, reason}`: one count per reason code of every decision made
 *   (a stored decision returned to a retry is not counted again); an ALLOW without reasons
 *   counts once with reason `NONE`.
 * - `writ_verify_duration_seconds`: time of every `POST /v1/verify` handled (errors included).
 * - `writ_ledger_append_seconds`: time of every spend transaction (`recordAllowedSpends`, one
 *   per batch of ALLOWs); `writ_spend_batch_size`: how many spends each one recorded or refused.
 * - `writ_revocation_index_stale`: 1 while the process's revocation index is stale (verify
 *   then steps up with REVOCATION_STATE_STALE), else 0; read at scrape time.
 * - `writ_verify_cached_agents`: agents' snapshots kept in memory (at most
 *   WRIT_CACHE_MAX_AGENTS); `writ_verify_snapshot_reads_total{result="hit"|"miss"}`: verifies
 *   that found their agent's snapshot in memory or read it from Postgres. Many misses with the
 *   gauge at its bound mean the bound is below the number of agents verifying. Read at
 *   scrape time from the snapshots' own counters (nothing is counted per request here).
 *
 * Promise: creating them twice on one registry reuses the registered metrics.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { Verdict } from "../core/evaluate/index.js";
import { registered } from "../metrics/index.js";

/** The verify metrics. */
export interface VerifyMetrics {
  readonly verdicts: Counter<"verdict" | "reason">;
  readonly duration: Histogram;
  readonly ledgerAppend: Histogram;
  readonly spendBatchSize: Histogram;
  readonly stale: Gauge;
  /** Counts one decision. */
  countDecision(verdict: Verdict, reasons: readonly string[]): void;
}

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** What the snapshot metrics read at scrape time. */
export interface SnapshotCounts {
  size: number;
  reads: { hits: number; misses: number };
}

/** The verify metrics on `registry`; `isStale` and `candidates` are read when scraped. */
export function verifyMetrics(registry: Registry, isStale: () => boolean, candidates?: SnapshotCounts): VerifyMetrics {
  const verdicts = registered(
    registry,
    "writ_verdicts_total",
    () =>
      new Counter({
        name: "writ_verdicts_total",
        help: "Verify decisions by verdict and reason code (NONE for an ALLOW without reasons).",
        labelNames: ["verdict", "reason"] as const,
        registers: [registry],
      }),
  );
  const duration = registered(
    registry,
    "writ_verify_duration_seconds",
    () =>
      new Histogram({
        name: "writ_verify_duration_seconds",
        help: "Duration of POST /v1/verify, seconds.",
        buckets: BUCKETS,
        registers: [registry],
      }),
  );
  const ledgerAppend = registered(
    registry,
    "writ_ledger_append_seconds",
    () =>
      new Histogram({
        name: "writ_ledger_append_seconds",
        help: "Duration of the spend transaction that records an ALLOW in the ledger, seconds.",
        buckets: BUCKETS,
        registers: [registry],
      }),
  );
  const spendBatchSize = registered(
    registry,
    "writ_spend_batch_size",
    () =>
      new Histogram({
        name: "writ_spend_batch_size",
        help: "Spends (ALLOW candidates) that shared one spend transaction (group commit).",
        buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
        registers: [registry],
      }),
  );
  const stale = registered(
    registry,
    "writ_revocation_index_stale",
    () =>
      new Gauge({
        name: "writ_revocation_index_stale",
        help: "1 while the revocation index may be stale (verify fails closed), else 0.",
        registers: [registry],
        collect() {
          this.set(isStale() ? 1 : 0);
        },
      }),
  );
  if (candidates) {
    registered(
      registry,
      "writ_verify_cached_agents",
      () =>
        new Gauge({
          name: "writ_verify_cached_agents",
          help: "Agents' verify snapshots kept in memory (at most WRIT_CACHE_MAX_AGENTS).",
          registers: [registry],
          collect() {
            this.set(candidates.size);
          },
        }),
    );
    const counted = { hit: 0, miss: 0 };
    registered(
      registry,
      "writ_verify_snapshot_reads_total",
      () =>
        new Counter({
          name: "writ_verify_snapshot_reads_total",
          help: "Agent snapshot reads of verify: hit (from memory) or miss (from Postgres).",
          labelNames: ["result"] as const,
          registers: [registry],
          collect() {
            const { hits, misses } = candidates.reads;
            this.inc({ result: "hit" }, hits - counted.hit);
            this.inc({ result: "miss" }, misses - counted.miss);
            counted.hit = hits;
            counted.miss = misses;
          },
        }),
    );
  }
  return {
    verdicts,
    duration,
    ledgerAppend,
    spendBatchSize,
    stale,
    countDecision(verdict, reasons) {
      if (reasons.length === 0) verdicts.inc({ verdict, reason: "NONE" });
      for (const reason of reasons) verdicts.inc({ verdict, reason });
    },
  };
}
