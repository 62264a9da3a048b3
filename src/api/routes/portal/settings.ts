/**
 * The portal sign-in settings, read by `loadSettings` in src/api/settings.ts (BUR_DEV_MAILBOX
 * stays there as `devMailbox`).
 *
 * Promise: never throws. A value that does not load is reported in `problems` and the default
 * (or "unset") is used.
 *
 * | Setting                       | Default               | Meaning                                   |
 * |-------------------------------|-----------------------|-------------------------------------------|
 * | WRIT_PUBLIC_BASE_URL          | unset: the address the server listens on | public base URL of the service: sign-in links point at `<it>/portal/sign-in` (BUR_PORTAL_URL is read as a deprecated alias) |
 * | BUR_MAGIC_LINK_TTL_SECONDS    | 900                   | lifetime of a sign-in link                |
 * | BUR_MAGIC_LINK_PER_ADDRESS    | 5                     | links sent to one address per window      |
 * | BUR_MAGIC_LINK_PER_CLIENT     | 50                    | link requests of one client (IP, see WRIT_TRUST_PROXY) per window |
 * | BUR_MAGIC_LINK_WINDOW_SECONDS | 900                   | the rate-limit window                     |
 * | BUR_SESSION_TTL_SECONDS       | 43200                 | lifetime of a portal session              |
 * | BUR_SMTP_URL                  | unset                 | smtp:// or smtps:// URL; unset: no mail   |
 * | BUR_MAIL_FROM                 | writ@localhost        | sender address of sign-in mail            |
 * | WRIT_APPROVAL_TTL_SECONDS     | 900                   | lifetime of a pending approval of a STEP_UP (docs/reference/approvals.md) |
 */
import { envInteger, envText, type Env } from "../../../core/env/index.js";

/** The typed portal settings. */
export interface PortalSettings {
  /**
   * The service's public base URL (WRIT_PUBLIC_BASE_URL), without a trailing slash, or null:
   * links then use the address the server listens on (never the request's Host header, which
   * the requester chooses).
   */
  readonly publicBaseUrl: string | null;
  readonly magicLinkTtlSeconds: number;
  /** Sign-in links sent to one address per window (BUR_MAGIC_LINK_PER_ADDRESS). */
  readonly linksPerAddress: number;
  /** Link requests of one client per window (BUR_MAGIC_LINK_PER_CLIENT). */
  readonly linksPerClient: number;
  /** The window of both limits, seconds (BUR_MAGIC_LINK_WINDOW_SECONDS). */
  readonly linkWindowSeconds: number;
  readonly sessionTtlSeconds: number;
  /** The SMTP URL, or null when mail is not configured. */
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
  /** Lifetime of a pending approval of a STEP_UP, seconds (WRIT_APPROVAL_TTL_SECONDS). */
  readonly approvalTtlSeconds: number;
}

const text = envText;

function url(raw: string | null, protocols: readonly string[]): URL | null {
  if (raw === null) return null;
  try {
    const u = new URL(raw);
    return protocols.includes(u.protocol) ? u : null;
  } catch {
    return null;
  }
}

/** Reads the portal settings; problems are appended to `problems` (no secret values). */
export function loadPortalSettings(env: Env, problems: string[]): PortalSettings {
  let publicBaseUrl: string | null = null;
  const baseName = text(env, "WRIT_PUBLIC_BASE_URL") !== null ? "WRIT_PUBLIC_BASE_URL" : "BUR_PORTAL_URL";
  const rawBase = text(env, baseName);
  if (rawBase !== null) {
    const u = url(rawBase, ["http:", "https:"]);
    if (u && !/[?#]/.test(rawBase) && u.username === "" && u.password === "") publicBaseUrl = rawBase.replace(/\/+$/, "");
    else problems.push(`${baseName} must be an http or https URL without query, fragment or credentials; sign-in links use the listening address`);
  }
  const rawSmtp = text(env, "BUR_SMTP_URL");
  const smtpUrl = url(rawSmtp, ["smtp:", "smtps:"]) ? rawSmtp : null;
  if (rawSmtp !== null && smtpUrl === null) problems.push("BUR_SMTP_URL must be an smtp:// or smtps:// URL; sign-in mail is off");
  const mailFrom = text(env, "BUR_MAIL_FROM") ?? "writ@localhost";
  return Object.freeze({
    publicBaseUrl,
    magicLinkTtlSeconds: envInteger(env, "BUR_MAGIC_LINK_TTL_SECONDS", { min: 1, max: 86_400, dflt: 900 }, problems),
    linksPerAddress: envInteger(env, "BUR_MAGIC_LINK_PER_ADDRESS", { min: 1, max: 1_000_000, dflt: 5 }, problems),
    linksPerClient: envInteger(env, "BUR_MAGIC_LINK_PER_CLIENT", { min: 1, max: 1_000_000, dflt: 50 }, problems),
    linkWindowSeconds: envInteger(env, "BUR_MAGIC_LINK_WINDOW_SECONDS", { min: 1, max: 86_400, dflt: 900 }, problems),
    sessionTtlSeconds: envInteger(env, "BUR_SESSION_TTL_SECONDS", { min: 1, max: 30 * 86_400, dflt: 43_200 }, problems),
    smtpUrl,
    mailFrom,
    approvalTtlSeconds: envInteger(env, "WRIT_APPROVAL_TTL_SECONDS", { min: 60, max: 7 * 86_400, dflt: 900 }, problems),
  });
}
