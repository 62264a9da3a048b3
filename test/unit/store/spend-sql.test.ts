import { describe, expect, it } from "vitest";
import { dollarQuoted } from "../../../src/store/ledger/spend-sql.js";

describe("dollarQuoted", () => {
  it("quotes with a tag the value does not hold", () => {
    const json = String.raw`{"a":"it's \ fine"}`;
    expect(dollarQuoted(json)).toBe("$w$" + json + "$w$");
    expect(dollarQuoted("x$w$y")).toBe("$w0$x$w$y$w0$");
    expect(dollarQuoted("$w$ $w0$ $w1$")).toBe("$w2$$w$ $w0$ $w1$$w2$");
    expect(dollarQuoted("")).toBe("$w$$w$");
  });

  it("never lets the value's end and the closing tag form an earlier tag", () => {
    // "$w$" + "a$w" + "$w$" would read as the body "a" followed by "w$".
    expect(dollarQuoted("a$w")).toBe("$w0$a$w$w0$");
    expect(dollarQuoted("a$")).toBe("$w$a$$w$");
    for (const v of ["a$w", "$w", "x$w0", "$w$w0$w", "a$w1"]) {
      const q = dollarQuoted(v);
      const tag = /^\$w\d*\$/.exec(q)![0];
      // The body Postgres reads: from after the opening tag to the first occurrence of the tag.
      expect(q.slice(tag.length, q.indexOf(tag, tag.length)), v).toBe(v);
      expect(q.indexOf(tag, tag.length)).toBe(q.length - tag.length);
    }
  });
});
