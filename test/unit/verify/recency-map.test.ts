import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecencyMap } from "../../../src/verify/caches/recency-map.js";

type Op = { kind: "get" | "set" | "delete"; key: number };
const ops = (keys: number) =>
  fc.array(fc.record({ kind: fc.constantFrom<Op["kind"]>("get", "get", "set", "set", "delete"), key: fc.nat({ max: keys - 1 }) }), {
    minLength: 100,
    maxLength: 400,
  });

describe("RecencyMap", () => {
  it("never drops a key used within the last max - floor(max / 4) uses, and keeps at most max (model: the uses of each key)", () => {
    fc.assert(
      // A few more keys than fit: evictions often meet keys read shortly before.
      fc.property(
        fc.integer({ min: 1, max: 24 }).chain((max) => fc.tuple(fc.constant(max), ops(max + 3))),
        ([max, program]) => {
          const m = new RecencyMap<number>(max);
          const model = new Map<string, number>();
          const lastUse = new Map<string, number>();
          let uses = 0;
          for (const { kind, key } of program) {
            const k = String(key);
            if (kind === "get") {
              const got = m.get(k);
              expect(got).toBe(model.get(k));
              if (got !== undefined) lastUse.set(k, ++uses);
            } else if (kind === "set") {
              m.set(k, key);
              model.set(k, key);
              lastUse.set(k, ++uses);
              m.trim((dropped) => {
                // A dropped key was not used recently, and was kept.
                expect(uses - (lastUse.get(dropped) ?? 0)).toBeGreaterThanOrEqual(max - Math.floor(max / 4));
                expect(model.delete(dropped)).toBe(true);
              });
            } else {
              expect(m.delete(k)).toBe(model.delete(k));
            }
            expect(m.size).toBe(model.size);
            expect(m.size).toBeLessThanOrEqual(max);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is exact LRU below four entries, and peek and has do not count as uses", () => {
    const m = new RecencyMap<string>(3);
    for (const k of ["a", "b", "c"]) m.set(k, k);
    expect(m.get("a")).toBe("a");
    expect(m.peek("b")).toBe("b");
    expect(m.has("b")).toBe(true);
    m.set("d", "d");
    const dropped: string[] = [];
    m.trim((k, v) => dropped.push(`${k}=${v}`));
    expect(dropped).toEqual(["b=b"]);
    expect(m.get("c")).toBe("c");
  });

  it("moves a read key only when its last move is more than a quarter of max uses old", () => {
    const m = new RecencyMap<number>(8);
    for (let i = 0; i < 8; i++) m.set(String(i), i);
    // "5" was moved 3 uses ago (more than 2): this read moves it to the young end; "7", moved
    // 2 uses before its read, stays where it is.
    m.get("5");
    m.get("7");
    const dropped: string[] = [];
    for (let i = 8; i < 15; i++) {
      m.set(String(i), i);
      m.trim((k) => dropped.push(k));
    }
    expect(dropped).toEqual(["0", "1", "2", "3", "4", "6", "7"]);
  });
});
