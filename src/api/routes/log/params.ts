/**
 * Defensive parsing of the log's path parameters. A sequence is attacker-controlled text:
 * only a plain decimal without sign, exponent or leading zeros that is a safe integer >= 1 is
 * a sequence; anything else (0, negatives, fractions, `1e3`, huge numbers) names no entry.
 */
import { isHashString, type HashString } from "../../../core/canonical/index.js";

const SEQUENCE_RE = /^[1-9][0-9]{0,15}$/;

/** The sequence named by `raw`, or undefined when it cannot name an entry. */
export function parseSequence(raw: unknown): number | undefined {
  if (typeof raw !== "string" || !SEQUENCE_RE.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The entry hash named by `raw` (`sha256:` + 64 lowercase hex), or undefined. */
export function parseEntryHash(raw: unknown): HashString | undefined {
  return isHashString(raw) ? raw : undefined;
}
