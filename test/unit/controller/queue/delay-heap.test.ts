import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DelayHeap } from "../../../../src/controller/queue/delay-heap.js";

describe("DelayHeap", () => {
  it("pops entries in due-time order (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 200 }), (ats) => {
        const h = new DelayHeap();
        ats.forEach((at, i) => h.push({ key: String(i), at }));
        expect(h.size).toBe(ats.length);
        const out: number[] = [];
        for (let e = h.pop(); e; e = h.pop()) out.push(e.at);
        expect(out).toEqual([...ats].sort((a, b) => a - b));
        expect(h.peek()).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  });
});
