/**
 * The hold expiry sweep of a data-plane process (WRIT_HOLD_EXPIRY_SECONDS, ./settings.ts):
 * every `intervalMs`, expires the holds allowed more than `expirySeconds` ago and still open
 * (`expireHolds`, src/store/ledger/holds.ts: an `expired` ledger entry releases the rest of each
 * through the one release function). Safe with several processes: each hold is expired under its
 * agreement row's lock, at most once. A failed pass is logged; the next one runs on schedule.
 * Each pass expires at most `batch` holds per round and at most 10 rounds.
 */
import type { Pool } from "pg";
import { expireHolds } from "../store/index.js";
import { startPeriodic } from "./periodic.js";
import type { RetentionLog } from "./worker.js";

/** Options of `startHoldExpiry`. */
export interface HoldExpiryOptions {
  expirySeconds: number;
  intervalMs: number;
  /** The service clock. */
  clock: () => Date;
  log?: RetentionLog;
  isReady?: () => boolean;
  batch?: number;
}

/** A running sweep. */
export interface HoldExpiry {
  /** Runs one pass now (after a pass in progress); the number of holds it expired. */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the sweep (see the module comment). */
export function startHoldExpiry(pool: Pool, o: HoldExpiryOptions): HoldExpiry {
  const batch = o.batch ?? 100;
  const pass = async (stopped: () => boolean): Promise<number> => {
    if (stopped() || (o.isReady && !o.isReady())) return 0;
    let total = 0;
    try {
      for (let round = 0; round < 10 && !stopped(); round++) {
        const now = o.clock();
        const r = await expireHolds(pool, { before: new Date(now.getTime() - o.expirySeconds * 1000), at: now.toISOString(), limit: batch });
        total += r.expired;
        for (const h of r.holds)
          o.log?.info(
            {
              agreement_id: h.agreementId,
              action_id: h.actionId,
              outcome: "expired",
              amount: h.entry.amount,
              currency: h.entry.currency,
              sequence: h.entry.sequence,
            },
            "outcome recorded",
          );
        if (r.expired < batch) break;
      }
      if (total > 0) o.log?.info({ expired: total }, "hold expiry released holds not captured in time");
    } catch (err) {
      o.log?.warn({ err }, "hold expiry pass failed; the next one runs on schedule");
    }
    return total;
  };
  return startPeriodic(pass, 0, { intervalMs: o.intervalMs, firstDelayMs: o.intervalMs });
}
