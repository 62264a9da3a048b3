/**
 * I-JSON text (src/core/canonical/well-formed.ts): lone surrogates are found, in values and in
 * member names, with the path of the first; paired surrogates (any non-BMP character) are fine.
 */
import { describe, expect, it } from "vitest";
import { describeLoneSurrogate, findLoneSurrogate, isWellFormedText } from "../../../src/core/canonical/index.js";

describe("isWellFormedText", () => {
  it("accepts text without surrogates and with paired ones (emoji, other non-BMP characters)", () => {
    for (const s of ["", "abc", "é€", "😀", "a😀b", "\ud83d\ude00", "𝄞 music", "\udbff\udfff"]) expect(isWellFormedText(s)).toBe(true);
  });

  it("refuses a lone high or low surrogate anywhere, and a low before a high", () => {
    for (const s of ["\ud800", "\udc00", "\ud800x", "x\udfff", "😀\ud83d", "\ude00\ud83d", "a\udbffb", "\ud800\ud800\udc00"])
      expect(isWellFormedText(s)).toBe(false);
  });

  it("answers as String.prototype.isWellFormed on every string of 1 to 3 units over surrogate edges", () => {
    const units = ["a", "\ud7ff", "\ud800", "\udbff", "\udc00", "\udfff", "\ue000"];
    const native = (s: string) => (s as unknown as { isWellFormed(): boolean }).isWellFormed();
    let checked = 0;
    const walk = (s: string) => {
      if (s.length > 0) {
        expect(isWellFormedText(s), JSON.stringify(s)).toBe(native(s));
        checked++;
      }
      if (s.length < 3) for (const u of units) walk(s + u);
    };
    walk("");
    expect(checked).toBe(7 + 49 + 343);
  });
});

describe("findLoneSurrogate", () => {
  it("is undefined for I-JSON values, paired surrogates in values and names included", () => {
    expect(findLoneSurrogate({ a: ["x", 1, null, true, { "😀": "😀" }], b: "𝄞" })).toBeUndefined();
    expect(findLoneSurrogate("plain")).toBeUndefined();
    expect(findLoneSurrogate(42)).toBeUndefined();
  });

  it("names the path of a value that holds one, through objects and arrays", () => {
    expect(findLoneSurrogate({ action: { action_id: "\ud800" } })).toEqual({ path: ["action", "action_id"], inName: false });
    expect(findLoneSurrogate({ items: ["ok", { note: "x\udc00" }] })).toEqual({ path: ["items", "1", "note"], inName: false });
    expect(findLoneSurrogate("\ud800")).toEqual({ path: [], inName: false });
  });

  it("finds one in a member name and names the object that has it", () => {
    expect(findLoneSurrogate({ action: { metadata: { "\udc00k": 1 } } })).toEqual({ path: ["action", "metadata"], inName: true });
    expect(findLoneSurrogate({ "k\ud800": "v" })).toEqual({ path: [], inName: true });
  });

  it("answers the first in document order", () => {
    expect(findLoneSurrogate({ a: { b: "ok", c: "\ud800" }, d: "\ud800" })).toEqual({ path: ["a", "c"], inName: false });
    expect(findLoneSurrogate([["ok"], ["\ud800"], "\udc00"])).toEqual({ path: ["1", "0"], inName: false });
  });

  it("walks any nesting depth JSON.parse accepts without running out of stack", () => {
    const depth = 200_000;
    const deep = JSON.parse(`${"[".repeat(depth)}"\\ud800"${"]".repeat(depth)}`) as unknown;
    expect(findLoneSurrogate(deep)?.path).toHaveLength(depth);
  });
});

describe("describeLoneSurrogate", () => {
  it("says which field, or which object's member names, must not hold one", () => {
    expect(describeLoneSurrogate({ path: ["action", "action_id"], inName: false }, "the body")).toBe("action.action_id must not contain a lone surrogate");
    expect(describeLoneSurrogate({ path: ["action"], inName: true }, "the body")).toBe("member names of action must not contain a lone surrogate");
    expect(describeLoneSurrogate({ path: [], inName: true }, "the body")).toBe("member names of the body must not contain a lone surrogate");
    expect(describeLoneSurrogate({ path: [], inName: false }, "the body")).toBe("the body must not contain a lone surrogate");
  });
});
