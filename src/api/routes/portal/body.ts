/**
 * Strict checks of the portal's small request bodies. The route schemas document the bodies;
 * these checks decide (Fastify's validator coerces types, e.g. 5 to "5", which the portal must
 * not accept), so a value that is not a JSON string is a 400, never coerced.
 */
import { ApiError } from "../../errors.js";

/** Validator compiler for routes whose handler checks the body itself (no coercion). */
export const passThroughValidator = () => (data: unknown) => ({ value: data });

/** The string member `name` of a JSON object body, or throws the 400. */
export function stringMember(body: unknown, name: string): string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError("BODY_NOT_OBJECT");
  const v = (body as Record<string, unknown>)[name];
  if (typeof v !== "string") throw new ApiError("VALIDATION_FAILED", `body/${name} must be a string`);
  return v;
}
