/**
 * `POST /demo/check` (unversioned, no credential, no storage): signs ONE sample agreement from
 * the request's intent with the PUBLIC demo principal key, delegates it to the fixed demo
 * agent, and evaluates the payment with the same engine as verify, at the app's clock
 * (docs/demo.md). Answers 200 `{verdict, svc_decision, reasons, messages, required_action,
 * confirmation_text, mandate_hash, principal, principal_fingerprint, agent_id, agreement_id,
 * status, demo: true}` for every evaluated payment (DENY included), and 400 `{error}` naming
 * the field when an amount, currency or other field is unusable. Works with DATABASE_URL unset.
 */
import type { FastifyPluginAsync } from "fastify";
import { DEMO_TEXT_LIMITS, DemoInputError, parseDemoCheckRequest, runDemoCheck, type DemoCheckRequest } from "../../../core/demo/index.js";
import { REASON_CODES } from "../../../core/evaluate/index.js";
import { ApiError, ERROR_BODY_SCHEMA } from "../../errors.js";

const threeLetters = { type: "string", pattern: "^[A-Z]{3}$" } as const;
const text = (max: number) => ({ type: "string", maxLength: max }) as const;

const bodySchema = {
  type: "object",
  required: ["intent", "payment"],
  properties: {
    intent: {
      type: "object",
      required: ["maximum_amount", "currency"],
      properties: {
        maximum_amount: { type: "number", minimum: 0, description: "Per-payment ceiling, major units, decimals allowed by the currency" },
        currency: threeLetters,
        purpose: text(DEMO_TEXT_LIMITS.purpose),
        category: text(DEMO_TEXT_LIMITS.category),
        natural_language: text(DEMO_TEXT_LIMITS.natural_language),
        include_expiry: { type: "boolean", default: true },
        time_limit: { type: "string", description: "YYYY-MM-DD (end of that UTC day) or an RFC 3339 date-time; default end of tomorrow (UTC)" },
      },
    },
    payment: {
      type: "object",
      required: ["amount", "currency"],
      properties: {
        amount: { type: "number", minimum: 0 },
        currency: threeLetters,
        merchant: text(DEMO_TEXT_LIMITS.merchant),
        item: text(DEMO_TEXT_LIMITS.item),
      },
    },
  },
} as const;

const responseSchema = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["ALLOW", "DENY", "STEP_UP"] },
    svc_decision: { type: "string", enum: ["ALLOW", "BLOCK", "STEP_UP", "REVOKE"] },
    reasons: { type: "array", items: { type: "string", enum: REASON_CODES } },
    messages: {
      type: "array",
      items: { type: "object", properties: { code: { type: "string" }, message: { type: "string" } } },
    },
    required_action: { type: "string" },
    confirmation_text: { type: "string" },
    mandate_hash: { type: "string" },
    principal: { type: "string" },
    principal_fingerprint: { type: "string" },
    agent_id: { type: "string" },
    agreement_id: { type: "string" },
    status: { type: "string" },
    demo: { type: "boolean" },
  },
} as const;

const demoRoutes: FastifyPluginAsync = async (app) => {
  app.post(
    "/demo/check",
    {
      schema: {
        tags: ["demo"],
        summary: "Sign a sample agreement with the public demo keys and evaluate one payment",
        description: "The demo keys are public (docs/demo.md): the answer demonstrates the engine and proves nothing. " + "Nothing is stored.",
        body: bodySchema,
        response: { 200: responseSchema, 400: ERROR_BODY_SCHEMA },
      },
      // The body schema documents the request; parseDemoCheckRequest checks it without the
      // type coercion Fastify would apply (a string amount is a 400, never a number).
      validatorCompiler: () => (data: unknown) => ({ value: data }),
    },
    async (request) => {
      let req: DemoCheckRequest;
      try {
        req = parseDemoCheckRequest(request.body);
      } catch (e) {
        if (e instanceof DemoInputError) throw new ApiError("DEMO_CHECK_INVALID", e.message);
        throw e;
      }
      return runDemoCheck(req, app.clock());
    },
  );
};

export default demoRoutes;
