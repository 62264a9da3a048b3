/**
 * The portal sign-in area: magic links (`POST /v1/portal/magic-link`), sessions
 * (`POST /v1/sessions`, `GET /v1/portal/me`, `DELETE /v1/sessions/current`) and, with
 * BUR_DEV_MAILBOX=1 only, the dev mailbox (`GET /v1/dev/mailbox`). See docs/portal.md.
 *
 * Promise: e-mail addresses appear in no answer except `GET /v1/portal/me` (to the session's
 * own principal) and the dev mailbox; sign-in mail never delays an answer.
 */
import type { FastifyPluginAsync } from "fastify";
import { SignInCourier } from "./courier.js";
import { registerDevMailbox } from "./dev-mailbox.js";
import { registerMagicLink } from "./magic-link.js";
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
  app.addHook("onClose", async () => courier.close());
  registerMagicLink(app, courier);
  registerSessions(app);
  if (settings.devMailbox) registerDevMailbox(app, courier);
};

export default portalRoutes;
