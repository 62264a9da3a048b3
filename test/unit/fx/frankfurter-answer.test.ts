import { describe, expect, it } from "vitest";
import { FxSourceError } from "../../../src/fx/errors.js";
import { interpretAnswer } from "../../../src/fx/frankfurter-answer.js";

const body = (date: string, rates: string, extra = '"amount":1.0,"base":"EUR",') => `{${extra}"date":"${date}","rates":{${rates}}}`;

function code(text: string, day = "2025-01-06"): string {
  try {
    interpretAnswer(text, "EUR", "USD", day);
  } catch (e) {
    if (e instanceof FxSourceError) return e.code;
    throw e;
  }
  return "accepted";
}

describe("interpretAnswer", () => {
  it("takes the reference's rate text exactly, with the source's publication day", () => {
    expect(interpretAnswer(body("2025-01-06", '"USD":1.0300'), "EUR", "USD", "2025-01-06")).toEqual({ kind: "rate", rate: "1.0300", sourceDay: "2025-01-06" });
  });

  it("accepts an earlier publication for a weekend or holiday, up to 14 days back", () => {
    expect(interpretAnswer(body("2025-01-03", '"USD":1.0299'), "EUR", "USD", "2025-01-05")).toEqual({ kind: "rate", rate: "1.0299", sourceDay: "2025-01-03" });
    expect(interpretAnswer(body("2024-12-23", '"USD":1.04'), "EUR", "USD", "2025-01-06").kind).toBe("rate");
    expect(interpretAnswer(body("2024-12-22", '"USD":1.04'), "EUR", "USD", "2025-01-06")).toEqual({ kind: "none" });
  });

  it("is none when the rates lack the reference", () => {
    expect(interpretAnswer(body("2025-01-06", '"GBP":0.83'), "EUR", "USD", "2025-01-06")).toEqual({ kind: "none" });
  });

  it("accepts an answer without amount and base (they are checked when present)", () => {
    expect(interpretAnswer(body("2025-01-06", '"USD":1.03', ""), "EUR", "USD", "2025-01-06").kind).toBe("rate");
  });

  it("refuses what is not the answer to the question asked", () => {
    expect(code("[]")).toBe("BAD_ANSWER");
    expect(code("{")).toBe("BAD_ANSWER");
    expect(code(body("2025-01-07", '"USD":1.03'))).toBe("BAD_ANSWER");
    expect(code(body("2025-1-6", '"USD":1.03'))).toBe("BAD_ANSWER");
    expect(code(body("2025-01-06", '"USD":1.03', '"amount":2,"base":"EUR",'))).toBe("BAD_ANSWER");
    expect(code(body("2025-01-06", '"USD":1.03', '"amount":1,"base":"GBP",'))).toBe("BAD_ANSWER");
    expect(code(body("2025-01-06", '"USD":"1.03"'))).toBe("BAD_ANSWER");
    expect(code(body("2025-01-06", '"USD":0.0'))).toBe("BAD_ANSWER");
    expect(code(body("2025-01-06", '"USD":-1'))).toBe("BAD_ANSWER");
    expect(code('{"amount":1,"base":"EUR","date":"2025-01-06","rates":[]}')).toBe("BAD_ANSWER");
  });
});
