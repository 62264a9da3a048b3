/**
 * The outbound policy's settings, read once with the other settings (docs/reference/settings.md,
 * docs/webhooks.md "Where deliveries may go"):
 *
 * - `WRIT_OUTBOUND_ALLOW_LOOPBACK`: `1` lets outbound connections reach 127.0.0.0/8 and ::1
 *   (`writ dev` and the tests set it); anything else (default): refused.
 * - `WRIT_OUTBOUND_ALLOW`: comma-separated CIDR ranges or single addresses that outbound
 *   connections may reach although they are not public (for example an internal rate source,
 *   `10.20.0.0/16`); default none. An entry that is not a range is skipped with a start-up
 *   problem (never widened).
 *
 * Never throws.
 */
import { envText, type Env } from "../core/env/index.js";
import { parseAllowEntry, type OutboundPolicy } from "./outbound-address.js";

/** Reads WRIT_OUTBOUND_ALLOW_LOOPBACK and WRIT_OUTBOUND_ALLOW; problems go to `problems`. */
export function loadOutboundPolicy(env: Env, problems: string[]): OutboundPolicy {
  const loopback = envText(env, "WRIT_OUTBOUND_ALLOW_LOOPBACK");
  if (loopback !== null && loopback !== "0" && loopback !== "1") problems.push("WRIT_OUTBOUND_ALLOW_LOOPBACK must be 0 or 1; using 0");
  const allow: string[] = [];
  for (const entry of (envText(env, "WRIT_OUTBOUND_ALLOW") ?? "").split(",")) {
    if (entry.trim() === "") continue;
    const range = parseAllowEntry(entry);
    if (range === undefined) problems.push(`WRIT_OUTBOUND_ALLOW: ${JSON.stringify(entry.trim())} is not an address or CIDR range; skipped`);
    else allow.push(range);
  }
  return Object.freeze({ allowLoopback: loopback === "1", allow: Object.freeze(allow) });
}
