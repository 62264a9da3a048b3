/**
 * The portal sign-in settings, read by `loadSettings` in src/api/settings.ts (BUR_DEV_MAILBOX
 * stays there as `devMailbox`).
 *
 * Promise: never throws. A value that does not load is reported in `problems` and the default
 * (or "unset") is used.
 *
 * | Setting                    | Default               | Meaning                                   |
 * |----------------------------|-----------------------|-------------------------------------------|
 * | BUR_PORTAL_URL             | http://127.0.0.1:8080 | base of sign-in links (`/portal/sign-in`) |
 * | BUR_MAGIC_LINK_TTL_SECONDS | 900                   | lifetime of a sign-in link                |
 * | BUR_SESSION_TTL_SECONDS    | 43200                 | lifetime of a portal session              |
 * | BUR_SMTP_URL               | unset                 | smtp:// or smtps:// URL; unset: no mail   |
 * | BUR_MAIL_FROM              | writ@localhost        | sender address of sign-in mail            |
 */

/** The typed portal settings. */
export interface PortalSettings {
  /** Base URL of sign-in links, without a trailing slash. */
  readonly portalUrl: string;
  readonly magicLinkTtlSeconds: number;
  readonly sessionTtlSeconds: number;
  /** The SMTP URL, or null when mail is not configured. */
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
}

/** Default base URL of sign-in links. */
export const DEFAULT_PORTAL_URL = "http://127.0.0.1:8080";

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string): string | null {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? null : v;
}

function seconds(env: Env, name: string, fallback: number, max: number, problems: string[]): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) {
    problems.push(`${name} must be a whole number of seconds from 1 to ${max}; using ${fallback}`);
    return fallback;
  }
  return n;
}

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
  let portalUrl = DEFAULT_PORTAL_URL;
  const rawPortal = text(env, "BUR_PORTAL_URL");
  if (rawPortal !== null) {
    if (url(rawPortal, ["http:", "https:"]) && !/[?#]/.test(rawPortal)) portalUrl = rawPortal.replace(/\/+$/, "");
    else problems.push(`BUR_PORTAL_URL must be an http or https URL without query; using ${DEFAULT_PORTAL_URL}`);
  }
  const rawSmtp = text(env, "BUR_SMTP_URL");
  const smtpUrl = url(rawSmtp, ["smtp:", "smtps:"]) ? rawSmtp : null;
  if (rawSmtp !== null && smtpUrl === null) problems.push("BUR_SMTP_URL must be an smtp:// or smtps:// URL; sign-in mail is off");
  const mailFrom = text(env, "BUR_MAIL_FROM") ?? "writ@localhost";
  return Object.freeze({
    portalUrl,
    magicLinkTtlSeconds: seconds(env, "BUR_MAGIC_LINK_TTL_SECONDS", 900, 86_400, problems),
    sessionTtlSeconds: seconds(env, "BUR_SESSION_TTL_SECONDS", 43_200, 30 * 86_400, problems),
    smtpUrl,
    mailFrom,
  });
}
