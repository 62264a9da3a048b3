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
});
