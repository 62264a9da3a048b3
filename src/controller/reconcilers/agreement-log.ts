/**
 * The transparency log entry of a declared agreement: kind `agreement`, body
 * `{agreement_id, delegation_id, mandate_hashes}` (the hash of each mandate, in order; the
 * hashes commit to every mandate field, signature aside). The body holds no time, so the same
 * agreement with the same mandates always has the same body.
 *
 * Promise: one entry per distinct body, ever. `ensureAgreementLogged` runs inside the
 * transaction that upserted the agreement, which holds the agreement's row lock, so two
 * reconciles of one agreement (two replicas during a leader hand-over) serialise; it first
 * checks the entry the resource's status names (a primary-key read), then the log itself (by
 * exact body text), and appends only when neither records the body. A re-reconcile, a restart
 * between the commit and the status write, or a lost status therefore never appends twice.
 */
import type { PoolClient } from "pg";
import { canonicalJson, type HashString } from "../../core/canonical/index.js";
import type { Signer } from "../../core/jose/index.js";
import { appendLogEntries, logEntryBySequence, agreementLogSequence } from "../../store/index.js";

/** The body of an agreement's log entry. */
export function agreementLogBody(agreementId: string, delegationId: string | null, mandateHashes: readonly HashString[]): Record<string, unknown> {
  return { agreement_id: agreementId, delegation_id: delegationId, mandate_hashes: [...mandateHashes] };
}

/** Options of `ensureAgreementLogged`. */
export interface EnsureLoggedOptions {
  /** The sequence the resource's status names (`status.logSequence`), checked first. */
  knownSequence?: number;
  /** Checkpoint origin for the signed head. */
  origin?: string;
  now: Date;
}

/** Makes sure `body` is in the log (see the module comment); the entry's sequence, and whether it was appended now. */
export async function ensureAgreementLogged(
  client: PoolClient,
  body: Record<string, unknown>,
  signer: Signer,
  opts: EnsureLoggedOptions,
): Promise<{ sequence: number; appended: boolean }> {
  const text = canonicalJson(body);
  if (opts.knownSequence !== undefined && Number.isSafeInteger(opts.knownSequence) && opts.knownSequence >= 1) {
    const e = await logEntryBySequence(client, opts.knownSequence);
    if (e && e.kind === "agreement" && canonicalJson(e.body) === text) return { sequence: opts.knownSequence, appended: false };
  }
  const found = await agreementLogSequence(client, text);
  if (found !== undefined) return { sequence: found, appended: false };
  const res = await appendLogEntries(
    client,
    [{ kind: "agreement", body }],
    signer,
    opts.origin !== undefined ? { now: opts.now, origin: opts.origin } : { now: opts.now },
  );
  const entry = res.entries[0];
  if (!entry) throw new Error("the log append returned no entry");
  return { sequence: entry.sequence, appended: true };
}
