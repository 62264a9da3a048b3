/**
 * The seam between the revocation feed and the transparency log: a stored revocation is
 * appended to the log as an entry of kind `revocation` whose body is the revocation object as
 * pushed, inside the SAME transaction that stores it (so both happen or neither does). The log
 * append takes its own advisory lock (`LOCK_IDS.transparencyLog`) after the revocation lock,
 * following the increasing-id lock order of src/store/locks.ts.
 *
 * `buildApp` takes any `RevocationLogAppender` (tests inject one); the default is the log
 * store's `appendLogEntries`.
 */
import type { PoolClient } from "pg";
import type { AgreementRevocation } from "../../core/agreement/index.js";
import type { Signer } from "../../core/jose/index.js";
import { appendLogEntries, type LogAppendInput, type LogAppendOptions } from "../log.js";

/**
 * Appends one stored revocation to the transparency log in the caller's transaction, signing
 * the new tree head with `signer` (the log signing key); `opts` carries the head's time and the
 * checkpoint origin (without an origin the head is stored without a checkpoint).
 */
export type RevocationLogAppender = (client: PoolClient, revocation: AgreementRevocation, signer: Signer, opts?: LogAppendOptions) => Promise<void>;

/** The log entry for a revocation: kind `revocation`, body the revocation object as pushed. */
export function revocationLogEntry(revocation: AgreementRevocation): LogAppendInput {
  return { kind: "revocation", body: revocation as unknown as Record<string, unknown> };
}

/** The default appender: the log store's `appendLogEntries` with one revocation entry. */
export const appendRevocationToLog: RevocationLogAppender = async (client, revocation, signer, opts) => {
  await appendLogEntries(client, [revocationLogEntry(revocation)], signer, opts ?? {});
};
