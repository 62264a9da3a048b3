/**
 * The I-JSON check every route runs before its schema (src/api/well-formed-input.ts), on the
 * parsed path, query and body. Over HTTP a lone surrogate can only arrive in a JSON body (the
 * router refuses %ED%A0%80 in a path and the query parser keeps it as text: see
 * test/integration/well-formed-input.test.ts); the path and query branches hold should a
 * decoder ever let one through.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/api/errors.js";
import { loneSurrogateError } from "../../../src/api/well-formed-input.js";

const request = (over: Partial<{ params: unknown; query: unknown; body: unknown }>) => ({ params: {}, query: {}, body: undefined, ...over });

describe("loneSurrogateError", () => {
  it("is undefined for a request whose text is I-JSON throughout, emoji included", () => {
    expect(loneSurrogateError(request({ params: { org_id: "org-😀" }, query: { q: ["a", "😀"] }, body: { "😀": ["😀"] } }))).toBeUndefined();
    expect(loneSurrogateError(request({ params: undefined, query: undefined, body: null }))).toBeUndefined();
  });

  it("400 naming the path parameter, the query value (single or repeated) or the query", () => {
    const cases: [Parameters<typeof loneSurrogateError>[0], string][] = [
      [request({ params: { org_id: "\ud800" } }), "params/org_id must not contain a lone surrogate"],
      [request({ query: { limit: "5", after: "x\udc00" } }), "querystring/after must not contain a lone surrogate"],
      [request({ query: { tag: ["ok", "\ud800"] } }), "querystring/tag must not contain a lone surrogate"],
      [request({ query: { "\ud800": "1" } }), "member names of querystring must not contain a lone surrogate"],
    ];
    for (const [req, message] of cases) {
      const e = loneSurrogateError(req);
      expect(e).toBeInstanceOf(ApiError);
      expect({ status: e?.statusCode, message: e?.message }).toEqual({ status: 400, message });
    }
  });

  it("checks the path before the query and the query before the body", () => {
    const all = request({ params: { id: "\ud800" }, query: { q: "\ud800" }, body: { a: "\ud800" } });
    expect(loneSurrogateError(all)?.message).toBe("params/id must not contain a lone surrogate");
    expect(loneSurrogateError({ ...all, params: {} })?.message).toBe("querystring/q must not contain a lone surrogate");
    expect(loneSurrogateError({ ...all, params: {}, query: {} })?.message).toBe("a must not contain a lone surrogate");
  });

  it("400 for a text body that is a lone surrogate", () => {
    expect(loneSurrogateError(request({ body: "\udc00" }))?.message).toBe("the request body must not contain a lone surrogate");
  });
});
