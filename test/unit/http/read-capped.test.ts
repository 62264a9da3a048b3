import { describe, expect, it } from "vitest";
import { readCapped } from "../../../src/http/read-capped.js";

/** A streamed answer of `chunks`, counting how many of them were pulled. */
function answer(chunks: string[]): { res: Response; pulled: () => number } {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(new TextEncoder().encode(chunks[i++]));
      else c.close();
    },
  });
  return { res: new Response(body), pulled: () => i };
}

describe("readCapped", () => {
  it("reads a body up to the cap, multi-byte characters across chunks included", async () => {
    const euro = new TextEncoder().encode("€"); // 3 bytes split over two chunks
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(euro.slice(0, 1));
        c.enqueue(euro.slice(1));
        c.close();
      },
    });
    expect(await readCapped(new Response(body), 3, () => new Error("too large"))).toBe("€");
    expect(await readCapped(new Response(null), 3, () => new Error("too large"))).toBe("");
  });

  it("throws the caller's error as soon as the cap is passed, without reading the rest", async () => {
    const a = answer(["aaaa", "bbbb", "cccc", "dddd"]);
    await expect(readCapped(a.res, 6, () => new Error("answer too large"))).rejects.toThrow("answer too large");
    expect(a.pulled()).toBeLessThan(4);
  });
});
