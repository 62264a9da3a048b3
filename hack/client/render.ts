/**
 * The typed client's generated types (src/client/schema.ts) from a served /openapi.json, with
 * openapi-typescript. Examples are left out first (they are documentation captured from one demo
 * run, not shapes), so the types change only when a route's schema does. Used by
 * `npm run gen:client` (./main.ts) and by the test that fails when the committed file is stale
 * (test/unit/client/schema.test.ts).
 */
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";

/** Where the generated types live. */
export const CLIENT_SCHEMA_FILE = new URL("../../src/client/schema.ts", import.meta.url);

/** `value` without any `example` member, deeply. */
function withoutExamples(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExamples);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "example")
      .map(([k, v]) => [k, withoutExamples(v)]),
  );
}

/** The TypeScript text of src/client/schema.ts for OpenAPI document `doc`. */
export async function renderClientSchema(doc: unknown): Promise<string> {
  const ast = await openapiTS(withoutExamples(doc) as OpenAPI3, { alphabetize: false });
  return `${COMMENT_HEADER.replace(" */", " * Generated from GET /openapi.json by `npm run gen:client` (hack/client/); a test fails when it is stale.\n */")}${astToString(ast)}`;
}
