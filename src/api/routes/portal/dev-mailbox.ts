/**
 * `GET /v1/dev/mailbox` (development only): the latest sign-in link this process sent.
 *
 * Promise: the route exists only when BUR_DEV_MAILBOX=1 (otherwise the path is an unknown
 * route, 404 `{error: "route not found"}`). It answers 200 `{email, link, token, sent_at}` for
 * the latest link, or 404 `{error: "dev mailbox is empty"}` before any was sent. The mailbox
 * lives in the memory of the process that handled the magic-link request.
 */
import type { FastifyInstance } from "fastify";
import { ApiError, ERROR_BODY_SCHEMA } from "../../errors.js";
import type { SignInCourier } from "./courier.js";

/** Registers the dev mailbox route (call only when the setting is on). */
export function registerDevMailbox(app: FastifyInstance, courier: SignInCourier): void {
  app.get(
    "/v1/dev/mailbox",
    {
      schema: {
        tags: ["portal"],
        summary: "Latest sign-in link (development; BUR_DEV_MAILBOX=1 only)",
        response: {
          200: {
            type: "object",
            required: ["email", "link", "token", "sent_at"],
            properties: {
              email: { type: "string" },
              link: { type: "string" },
              token: { type: "string" },
              sent_at: { type: "string", format: "date-time" },
            },
          },
          404: ERROR_BODY_SCHEMA,
        },
      },
    },
    async (_request, reply) => {
      const latest = courier.latestMessage();
      if (!latest) throw new ApiError("NOT_FOUND", "dev mailbox is empty");
      void reply.header("cache-control", "no-store");
      return latest;
    },
  );
}
