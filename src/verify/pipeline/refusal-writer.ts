/**
 * Stores the decisions of verifies that are not ALLOWs in batches (group commit): at most one
 * insert is in flight per process; decisions that arrive meanwhile wait and go together in the
 * next one (`saveRefusalDecisions`: one statement, committed without waiting for the WAL
 * flush, docs/verify.md "Durability"). The first refusal of a batch waits `gatherMs` (1 ms)
 * for others to join. Under load many refusals share one statement and one commit; alone, a
 * refusal waits 1 ms and its own insert.
 *
 * Promises:
 * - `save` resolves only once its decision is stored (or once the decision that another
 *   request stored first for the same (agent, action) is read).
 * - One request's decision never fails another's (src/store/isolated-batch.ts): when the
 *   batch's insert fails for a reason other than Postgres being unreachable (e.g. 22P02, text
 *   `jsonb` refuses), its halves are inserted apart, down to single decisions, so that every
 *   other decision is stored and answered as usual and only the one that fails on its own
 *   rejects, with its own error (a data exception is answered 400). When Postgres cannot be
 *   reached, every decision of the batch rejects with that error (the callers answer 503).
 * - Two decisions of one (agent, action) never share a batch: the later waits for the next,
 *   where it finds the first stored.
 * - A batch holds at most `maxBatch` decisions.
 */
import type { Pool } from "pg";
import { writeIsolated, type PendingRow } from "../../store/isolated-batch.js";
import { decisionKey, saveRefusalDecisions, type NewVerifyDecision, type SavedRefusal } from "../../store/verify-decisions.js";

/** Largest batch by default. */
export const DEFAULT_MAX_BATCH = 500;
/** How long the first refusal waits for others to join its batch, ms (default). */
export const DEFAULT_GATHER_MS = 1;

type Waiting = PendingRow<NewVerifyDecision, SavedRefusal>;

/** The batching writer (see the module comment). */
export class RefusalWriter {
  private queue: Waiting[] = [];
  private flushing = false;

  constructor(
    private readonly pool: Pool,
    private readonly opts: { maxBatch?: number; gatherMs?: number } = {},
  ) {}

  /** Stores `d` (see the module comment): `stored`, or the decision stored before. */
  save(d: NewVerifyDecision): Promise<SavedRefusal> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item: d, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let the requests of the next moment join the first batch.
        const gather = this.opts.gatherMs ?? DEFAULT_GATHER_MS;
        if (gather > 0) setTimeout(() => void this.flush(), gather);
        else setImmediate(() => void this.flush());
      }
    });
  }

  private take(): Waiting[] {
    const max = this.opts.maxBatch ?? DEFAULT_MAX_BATCH;
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const keys = new Set<string>();
    for (const w of this.queue) {
      const k = decisionKey(w.item.agentId, w.item.actionId);
      if (batch.length >= max || keys.has(k)) rest.push(w);
      else {
        keys.add(k);
        batch.push(w);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      await writeIsolated(this.take(), (ds) => saveRefusalDecisions(this.pool, ds));
    }
    this.flushing = false;
  }
}
