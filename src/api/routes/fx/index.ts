/**
 * `GET /v1/fx?currency=<ccy>&reference=<ccy>&day=<YYYY-MM-DD>`: units of the reference
 * currency for ONE unit of `currency` on the UTC day, as a decimal string (docs/fx.md).
 *
 * Checks, in order: the query (400, see query.ts), storage (503 `DATABASE_URL is not set`),
 * then the lookup (src/fx/rates.ts): the same currency is "1"; a day after today and a day
 * the source has no rate for are the 404 `no <reference> rate for <currency> on <day>`; a
 * stored day is served without the source; a source that is not configured, times out
 * (SVC_FX_TIMEOUT_MS) or answers unusably is the 502 `FX source did not answer`.
 * Answer 200 `{currency, reference_currency, day, rate}`, all strings.
 */
import type { FastifyPluginAsync } from "fastify";
import { FxSourceError, fxSourceFor, lookupRate, type RateLookup } from "../../../fx/index.js";
import { ApiError, errorResponses } from "../../errors.js";
import { parseFxQuery } from "./query.js";

const threeLetters = { type: "string", pattern: "^[A-Z]{3}$" } as const;

const fxRoutes: FastifyPluginAsync = async (app) => {
  const source = fxSourceFor(app.settings.fx, app.settings.outbound);

  app.get(
    "/v1/fx",
    {
      schema: {
        tags: ["rates"],
        summary: "Reference-currency rate of one currency on a UTC day",
        description:
          "Units of the reference currency for one unit of `currency` on `day`, as the source's exact decimal text. " +
          'The same currency is rate "1". Rates are stored per (currency, reference, day) once fetched.',
        querystring: {
          type: "object",
          required: ["currency"],
          properties: {
            currency: { ...threeLetters, description: "Three upper-case letters (ISO 4217)" },
            reference: { ...threeLetters, description: "Reference currency, default USD" },
            reference_currency: { ...threeLetters, description: "Alias of reference; must agree with it when both are given" },
            day: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "UTC date, default today (UTC)" },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["currency", "reference_currency", "day", "rate"],
            properties: {
              currency: { type: "string" },
              reference_currency: { type: "string" },
              day: { type: "string" },
              rate: { type: "string", pattern: "^[0-9]+(\\.[0-9]+)?$" },
            },
          },
          ...errorResponses(400, 404, 502, 503),
        },
      },
      // The querystring schema documents the request; parseFxQuery checks it (exact 400 texts).
      validatorCompiler: () => (data: unknown) => ({ value: data }),
    },
    async (request) => {
      const now = app.clock();
      const { currency, reference, day } = parseFxQuery(request.query, now);
      const pool = app.requireDb();
      let found: RateLookup;
      try {
        found = await lookupRate(pool, currency, reference, day, { source, now });
      } catch (e) {
        if (e instanceof FxSourceError) {
          request.log.warn({ code: e.code, reason: e.message, currency, reference, day }, "FX source did not answer");
          throw new ApiError("FX_SOURCE_FAILED");
        }
        throw e;
      }
      if (!found.found) throw new ApiError("FX_RATE_NOT_FOUND", `no ${reference} rate for ${currency} on ${day}`);
      return { currency, reference_currency: reference, day, rate: found.rate };
    },
  );
};

export default fxRoutes;
