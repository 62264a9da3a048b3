/**
 * I-JSON (RFC 7493) for every request: no string the API accepts, in a path parameter, a query
 * value or name, or anywhere in a JSON body (member names included), may hold a lone surrogate
 * (`"\ud800"` parses, but has no UTF-8 form: Postgres `jsonb` refuses it, and canonical JSON
 * cannot hash it the way an independent verifier would). `buildApp` runs this check for every
 * route before its schema (src/api/app.ts), so one request's text never reaches a statement
 * shared with other requests, and the 400 names the first offending field:
 * `action.action_id must not contain a lone surrogate`, `member names of action.metadata must
 * not contain a lone surrogate`, `params/org_id must not contain a lone surrogate`.
 *
 * Numbers too (RFC 7493 section 2.2): a JSON body holding a number that a double cannot hold
 * exactly is refused by the app's JSON parser, naming its path (`action.amount
 * 50.000000000000001 cannot be read exactly: ...`), so no route ever reads a rounded amount.
 */
import { describeInexactNumber, describeLoneSurrogate, findInexactNumber, findLoneSurrogate } from "../core/canonical/index.js";
import { ApiError } from "./errors.js";

/** The 400 for a lone surrogate among the values (or names) of `part`, or undefined. */
function inPart(part: "params" | "querystring", values: unknown): ApiError | undefined {
  const found = findLoneSurrogate(values);
  if (!found) return undefined;
  // `part/name`, as the other refusals of path and query values (src/api/app.ts).
  const field = found.inName ? part : `${part}/${found.path[0] ?? ""}`;
  return new ApiError("VALIDATION_FAILED", describeLoneSurrogate({ path: [], inName: found.inName }, field));
}

/** The 400 for a lone surrogate in a parsed body, naming its JSON path, or undefined. */
function inBody(body: unknown): ApiError | undefined {
  const found = body === undefined || body === null ? undefined : findLoneSurrogate(body);
  return found ? new ApiError("VALIDATION_FAILED", describeLoneSurrogate(found, "the request body")) : undefined;
}

/** The 400 for the first lone surrogate of a request's path, query or body, or undefined. */
export function loneSurrogateError(request: { params: unknown; query: unknown; body: unknown }): ApiError | undefined {
  return inPart("params", request.params) ?? inPart("querystring", request.query) ?? inBody(request.body);
}

/** The 400 for the first JSON number of a (parsed) body text a double cannot hold exactly, or undefined. */
export function inexactNumberError(text: string): ApiError | undefined {
  const found = findInexactNumber(text);
  return found ? new ApiError("VALIDATION_FAILED", describeInexactNumber(found, "the request body")) : undefined;
}
