/**
 * Where sign-in links go: the dev mailbox (BUR_DEV_MAILBOX=1, the latest link in memory) and
 * SMTP (BUR_SMTP_URL, via nodemailer).
 *
 * Promise: `dispatch` returns at once: the request path never waits on SMTP. Sending happens in
 * the background over a small connection pool with connect, greeting and socket time limits; a
 * failure is logged (without the link or the address), never surfaced. At most
 * `MAX_PENDING_MAIL` messages wait at a time; more are dropped with a warning. `close()` stops
 * the transport. The dev mailbox is per process (it is a development aid, not storage).
 *
 * SMTP URL: `smtp://[user:pass@]host[:port]` (STARTTLS when the server offers it) or
 * `smtps://...` (TLS from the start); the query parameters `ignoreTLS=true` and
 * `requireTLS=true` are honoured; nothing else is read from the URL.
 */
import nodemailer from "nodemailer";
import type { Transporter } from "nodemailer";
import type SMTPPool from "nodemailer/lib/smtp-pool/index.js";

/** One sign-in link as sent. */
export interface SignInMessage {
  email: string;
  link: string;
  token: string;
  /** RFC 3339 time it was handed to the courier. */
  sent_at: string;
}

/** Where the courier reports (a pino/Fastify logger fits). */
export interface CourierLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Options of a courier. */
export interface CourierOptions {
  devMailbox: boolean;
  smtpUrl: string | null;
  mailFrom: string;
  /** Link lifetime, for the message text. */
  ttlSeconds: number;
  log: CourierLog;
}

/** Most messages waiting for SMTP at once. */
export const MAX_PENDING_MAIL = 100;

/** nodemailer SMTP pool options from an smtp:// or smtps:// URL (see the module comment). */
export function smtpOptions(smtpUrl: string): SMTPPool.Options {
  const u = new URL(smtpUrl);
  const flag = (name: string) => u.searchParams.get(name) === "true";
  return {
    pool: true,
    maxConnections: 2,
    host: u.hostname.replace(/^\[(.*)\]$/, "$1"),
    ...(u.port ? { port: Number(u.port) } : {}),
    secure: u.protocol === "smtps:",
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
    ...(flag("ignoreTLS") ? { ignoreTLS: true } : {}),
    ...(flag("requireTLS") ? { requireTLS: true } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  };
}

/** The text of a sign-in mail. */
export function signInText(link: string, ttlSeconds: number): string {
  const minutes = Math.max(1, Math.round(ttlSeconds / 60));
  return [
    "Use this link to sign in to the Writ portal. It works once and expires in",
    `${minutes} minute${minutes === 1 ? "" : "s"}.`,
    "",
    link,
    "",
    "If you did not ask to sign in, ignore this message.",
    "",
  ].join("\n");
}

/** Sends sign-in links (see the module comment). */
export class SignInCourier {
  private latest: SignInMessage | null = null;
  private pending = 0;
  private readonly transport: Transporter | null;

  constructor(private readonly opts: CourierOptions) {
    this.transport = opts.smtpUrl ? nodemailer.createTransport(smtpOptions(opts.smtpUrl)) : null;
  }

  /** True when links go anywhere at all. */
  get delivers(): boolean {
    return this.opts.devMailbox || this.transport !== null;
  }

  /** The latest link kept by the dev mailbox, or null. */
  latestMessage(): SignInMessage | null {
    return this.opts.devMailbox ? this.latest : null;
  }

  /** Hands a link over; returns at once. */
  dispatch(msg: SignInMessage): void {
    if (this.opts.devMailbox) this.latest = msg;
    const transport = this.transport;
    if (!transport) return;
    if (this.pending >= MAX_PENDING_MAIL) {
      this.opts.log.warn({ pending: this.pending }, "sign-in mail dropped: too many messages waiting for SMTP");
      return;
    }
    this.pending += 1;
    transport
      .sendMail({ from: this.opts.mailFrom, to: msg.email, subject: "Your Writ sign-in link", text: signInText(msg.link, this.opts.ttlSeconds) })
      .then(
        () => this.opts.log.debug({}, "sign-in mail sent"),
        (err: unknown) => {
          const code = (err as { code?: unknown } | null)?.code;
          this.opts.log.warn({ code: typeof code === "string" ? code : undefined }, "sign-in mail could not be sent");
        },
      )
      .finally(() => {
        this.pending -= 1;
      });
  }

  /** Stops the SMTP transport (messages still waiting are abandoned). */
  close(): void {
    this.transport?.close();
  }
}
