import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderReasonsDoc } from "../../hack/gen-reasons-doc.js";

describe("generated docs", () => {
  it("docs/reasons.md is current (run npm run gen:docs)", () => {
    expect(readFileSync(new URL("../../docs/reasons.md", import.meta.url), "utf8")).toBe(renderReasonsDoc());
  });
});
