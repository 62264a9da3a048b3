/**
 * The principal's portal: magic links (`POST /v1/portal/magic-link`, rate-limited), the pages
 * (`GET /portal/sign-in`, which a link opens, and `GET /portal/`: agents, delegations,
 * agreements, budgets, ledgers, revocation, sign-out; ./pages.ts), sessions (`POST
 * /v1/sessions`, `GET /v1/portal/me`, `DELETE /v1/sessions/current`), the principal's records
 * (`GET /v1/portal/{agents,delegations,agreements}`, `POST
 * /v1/portal/delegations/{id}/revoke`; ./records.ts) and, with BUR_DEV_MAILBOX=1 only, the dev
 * mailbox (`GET /v1/dev/mailbox`). See docs/portal.md.
 *
 * Promise: e-mail addresses appear in no answer except `GET /v1/portal/me` (to the session's
 * own principal) and the dev mailbox; sign-in mail never delays an answer; sign-in tokens never
 * reach a request log (they travel in the link's fragment and in request bodies).
 */
import rateLimit from "@fastify/rate-limit";
import type { FastifyPluginAsync } from "fastify";
import { SignInCourier } from "./courier.js";
import { registerDevMailbox } from "./dev-mailbox.js";
import { registerMagicLink } from "./magic-link.js";
import { registerPortalPages } from "./pages.js";
import { registerPortalRecords } from "./records.js";
import { registerSessions } from "./sessions.js";

const portalRoutes: FastifyPluginAsync = async (app) => {
  const { settings } = app;
  const courier = new SignInCourier({
    devMailbox: settings.devMailbox,
    smtpUrl: settings.portal.smtpUrl,
    mailFrom: settings.portal.mailFrom,
    ttlSeconds: settings.portal.magicLinkTtlSeconds,
    log: app.log.child({ component: "portal-mail" }),
  });
  if (!courier.delivers && app.pool !== null) {
    app.log.warn("neither BUR_SMTP_URL nor BUR_DEV_MAILBOX is set: portal sign-in links go nowhere");
  }
  if (courier.delivers && settings.portal.publicBaseUrl === null) {
    app.log.warn("WRIT_PUBLIC_BASE_URL is not set: sign-in links point at the address this server listens on");
  }
  app.addHook("onClose", async () => courier.close());
  // Only the limiters the magic-link route creates; no route is limited by default.
  await app.register(rateLimit, { global: false });
  registerMagicLink(app, courier);
  registerPortalPages(app);
  registerSessions(app);
  registerPortalRecords(app);
  if (settings.devMailbox) registerDevMailbox(app, courier);
};

export default portalRoutes;
