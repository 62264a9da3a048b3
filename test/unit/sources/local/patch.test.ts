/**
 * The local API server's patches: JSON merge patch (RFC 7386) and JSON patch (RFC 6902), never
 * mutating the target, refusing what does not apply with PatchError.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonPatch, mergePatch, PatchError, sameJson } from "../../../../src/sources/local/patch.js";

describe("mergePatch", () => {
  it("merges members, removes those patched to null, replaces non-objects", () => {
    const target = { metadata: { name: "a", finalizers: ["x"], annotations: { k: "v" } }, spec: { n: 1 } };
    expect(mergePatch(target, { metadata: { finalizers: null, annotations: { j: "w" } }, spec: [1] })).toEqual({
      metadata: { name: "a", annotations: { k: "v", j: "w" } },
      spec: [1],
    });
    expect(mergePatch(target, "x")).toBe("x");
  });

  it("keeps a member named __proto__ as data (no prototype change)", () => {
    const out = mergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true}}');
  });

  it("never mutates its target (property)", () => {
    const json = fc.jsonValue();
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const before = JSON.stringify(target);
        mergePatch(target, patch);
        expect(JSON.stringify(target)).toBe(before);
      }),
      { numRuns: 150 },
    );
  });
});

describe("jsonPatch", () => {
  it("applies add, replace, remove, test, move and copy in order", () => {
    const doc = { status: { a: 1 }, list: [1, 2] };
    const out = jsonPatch(doc, [
      { op: "add", path: "/status", value: { b: 2 } },
      { op: "add", path: "/list/-", value: 3 },
      { op: "replace", path: "/list/0", value: 0 },
      { op: "remove", path: "/list/1" },
      { op: "test", path: "/status/b", value: 2 },
      { op: "copy", from: "/status", path: "/copy" },
      { op: "move", from: "/copy/b", path: "/moved" },
      { op: "add", path: "/a~1b", value: true },
    ]);
    expect(out).toEqual({ status: { b: 2 }, list: [0, 3], copy: {}, moved: 2, "a/b": true });
    expect(doc).toEqual({ status: { a: 1 }, list: [1, 2] });
  });

  it("refuses what does not apply", () => {
    for (const ops of [
      [{ op: "remove", path: "/missing" }],
      [{ op: "replace", path: "/x/y", value: 1 }],
      [{ op: "test", path: "/a", value: 2 }],
      [{ op: "add", path: "no-slash", value: 1 }],
      [{ op: "add", path: "/list/9", value: 1 }],
      [{ op: "add", path: "/a" }],
      [{ op: "frobnicate", path: "/a" }],
      { op: "add", path: "/a", value: 1 },
    ]) {
      expect(() => jsonPatch({ a: 1, list: [] }, ops)).toThrow(PatchError);
    }
  });
});

describe("sameJson", () => {
  it("ignores member order only", () => {
    expect(sameJson({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  });
});
