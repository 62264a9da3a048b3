/**
 * A strict JSON parser (RFC 8259) that keeps every number as its exact source text, so a rate
 * such as `1.0842` is never turned into a float and back. Objects become Maps (no prototype
 * tricks); a repeated member name is an error, as is nesting deeper than `maxDepth`. Strings
 * are decoded by `JSON.parse` of their own token, so escapes follow the standard exactly.
 */

/** A JSON number kept as its source text (for example "1.0842" or "6.1e-05"). */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** A parsed JSON value with numbers as `JsonNumber` and objects as Maps. */
export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | Map<string, JsonValue>;

/** Thrown for text that is not one JSON value. */
export class JsonSyntaxError extends Error {
  override readonly name = "JsonSyntaxError";
  readonly code = "JSON_SYNTAX";
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WS = new Set([" ", "\t", "\n", "\r"]);

class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
  ) {}

  fail(what: string): never {
    throw new JsonSyntaxError(`${what} at offset ${this.i}`);
  }

  ws(): void {
    while (this.i < this.s.length && WS.has(this.s[this.i] as string)) this.i++;
  }

  literal<T extends boolean | null>(word: string, value: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail("unexpected token");
    this.i += word.length;
    return value;
  }

  /** Consumes `close` when it comes next (an empty object or array). */
  closes(close: string): boolean {
    this.ws();
    if (this.s[this.i] !== close) return false;
    this.i++;
    return true;
  }

  string(): string {
    const start = this.i;
    this.i++; // opening quote
    for (;;) {
      const c = this.s.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail("unterminated string");
      if (c < 0x20) this.fail("control character in string");
      if (c === 0x5c)
        this.i += 2; // backslash: skip the escaped character (JSON.parse checks it)
      else if (c === 0x22) break;
      else this.i++;
    }
    this.i++;
    try {
      return JSON.parse(this.s.slice(start, this.i)) as string;
    } catch {
      return this.fail("bad string escape");
    }
  }

  number(): JsonNumber {
    NUMBER_RE.lastIndex = this.i;
    const m = NUMBER_RE.exec(this.s);
    if (!m) this.fail("bad number");
    this.i += m[0].length;
    return new JsonNumber(m[0]);
  }

  value(depth: number): JsonValue {
    this.ws();
    const c = this.s[this.i];
    if (c === "{" || c === "[") {
      if (depth >= this.maxDepth) this.fail("nesting too deep");
      return c === "{" ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return this.string();
    if (c === "t") return this.literal("true", true);
    if (c === "f") return this.literal("false", false);
    if (c === "n") return this.literal("null", null);
    return this.number();
  }

  object(depth: number): Map<string, JsonValue> {
    const out = new Map<string, JsonValue>();
    this.i++;
    if (this.closes("}")) return out;
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("expected a member name");
      const key = this.string();
      if (out.has(key)) this.fail(`repeated member ${JSON.stringify(key)}`);
      this.ws();
      if (this.s[this.i] !== ":") this.fail("expected ':'");
      this.i++;
      out.set(key, this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") return out;
      if (c !== ",") this.fail("expected ',' or '}'");
    }
  }

  array(depth: number): JsonValue[] {
    const out: JsonValue[] = [];
    this.i++;
    if (this.closes("]")) return out;
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected ',' or ']'");
    }
  }

  document(): JsonValue {
    const v = this.value(0);
    this.ws();
    if (this.i !== this.s.length) this.fail("trailing characters");
    return v;
  }
}

/** Parses one JSON document keeping numbers as text. Throws JsonSyntaxError. */
export function parseJsonKeepingNumbers(text: string, maxDepth = 16): JsonValue {
  return new Parser(text, maxDepth).document();
}

/** Longest plain decimal a number may expand to (digits and point). */
const MAX_DECIMAL_LENGTH = 64;

/**
 * The plain decimal text (no exponent, no sign) of a non-negative JSON number, by moving the
 * decimal point in the text: never float arithmetic. Text without an exponent is returned
 * exactly as written ("1.10" stays "1.10"); an exponent form is expanded and trimmed of
 * leading and trailing zeros ("6.1e-05" -> "0.000061"). Undefined for a negative number or an
 * expansion longer than 64 characters.
 */
export function plainDecimal(numberText: string): string | undefined {
  if (numberText.startsWith("-")) return undefined;
  const [mantissa = "", expText] = numberText.split(/[eE]/);
  if (expText === undefined) return mantissa.length <= MAX_DECIMAL_LENGTH ? mantissa : undefined;
  const exp = Number(expText);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > MAX_DECIMAL_LENGTH) return undefined;
  const [ip = "", fp = ""] = mantissa.split(".");
  const digits = ip + fp;
  const point = ip.length + exp;
  let whole: string;
  let frac: string;
  if (point <= 0) [whole, frac] = ["0", "0".repeat(-point) + digits];
  else if (point >= digits.length) [whole, frac] = [digits + "0".repeat(point - digits.length), ""];
  else [whole, frac] = [digits.slice(0, point), digits.slice(point)];
  whole = whole.replace(/^0+(?=\d)/, "");
  frac = frac.replace(/0+$/, "");
  const out = frac === "" ? whole : `${whole}.${frac}`;
  return out.length <= MAX_DECIMAL_LENGTH ? out : undefined;
}
