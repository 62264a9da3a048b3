/**
 * Validation messages of the registry routes: a Fastify `schemaErrorFormatter` that turns the
 * first schema violation into one short, stable sentence naming the field, for example
 * `purpose_code is required`, `org_type must be one of: agent_operator, wallet, ...`,
 * `evidence_hash must match ^sha256:[0-9a-f]{64}$`. The answer is a 400 `{error}` (the
 * error handler answers every validation error so).
 */
import type { FastifySchemaValidationError } from "fastify";
import { NO_NUL_PATTERN } from "../../../core/schemas/index.js";

/** Which part of the request a violation is in (Fastify's `SchemaErrorDataVar`). */
export type SchemaErrorDataVar = "body" | "headers" | "params" | "querystring";

function fieldName(instancePath: string, dataVar: SchemaErrorDataVar, extra?: string): string {
  const parts = instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (extra !== undefined) parts.push(extra);
  const name = parts.join(".");
  if (dataVar === "body") return name;
  const where = dataVar === "params" ? "path parameter" : dataVar === "querystring" ? "query parameter" : "header";
  return name === "" ? dataVar : `${where} ${name}`;
}

/** Pattern of free text fields: anything but U+0000 (the core's text rule, src/core/schemas/text.ts). */
export { NO_NUL_PATTERN };

/** The sentence for one schema violation. */
export function describeSchemaError(e: FastifySchemaValidationError, dataVar: SchemaErrorDataVar): string {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "required") return `${fieldName(e.instancePath, dataVar, String(p.missingProperty))} is required`;
  const field = fieldName(e.instancePath, dataVar);
  if (field === "" && e.keyword === "type") return "request body must be a JSON object";
  const subject = field === "" ? "request body" : field;
  switch (e.keyword) {
    case "type":
      return `${subject} must be ${String(p.type) === "array" || String(p.type) === "object" || String(p.type) === "integer" ? "an" : "a"} ${String(p.type)}`;
    case "enum":
      return `${subject} must be one of: ${(p.allowedValues as unknown[]).map(String).join(", ")}`;
    case "pattern":
      return p.pattern === NO_NUL_PATTERN ? `${subject} must not contain U+0000` : `${subject} must match ${String(p.pattern)}`;
    case "minLength":
      return Number(p.limit) === 1 ? `${subject} must not be empty` : `${subject} must be at least ${String(p.limit)} characters`;
    case "maxLength":
      return `${subject} must be at most ${String(p.limit)} characters`;
    case "minItems":
      return `${subject} must have at least ${String(p.limit)} items`;
    case "maxItems":
      return `${subject} must have at most ${String(p.limit)} items`;
    case "additionalProperties":
      return `${fieldName(e.instancePath, dataVar, String(p.additionalProperty))} is not allowed`;
    default:
      return `${subject} ${e.message ?? "is not valid"}`;
  }
}

/** The route option `schemaErrorFormatter` of the registry routes. */
export function registrySchemaErrors(errors: FastifySchemaValidationError[], dataVar: SchemaErrorDataVar): Error {
  const first = errors[0];
  return new Error(first ? describeSchemaError(first, dataVar) : "request is not valid");
}
