/**
 * Exact JSON numbers (I-JSON, RFC 7493 section 2.2): a number literal of a JSON text is exact
 * when the double `JSON.parse` reads it as has the same decimal value as the literal, i.e. the
 * shortest form of that double (`String(n)`) names the literal's value. `50.000000000000001`
 * is not (it is read as 50), nor `1e400` (Infinity) or `1e-400` (0), nor
 * `12345678901234567890`; `0.1`, `1.10`, `1e2` and `-0` are. Text whose every number is exact
 * can be read with `JSON.parse` and its numbers turned into minor units from `String(n)`
 * without ever changing an amount (src/core/money).
 *
 * Cost: one regular-expression test of the text; only a text that holds a run of 16 digits
 * (and points) or an exponent is scanned, in one pass without recursion. A literal of at most
 * 15 significant digits in the normal range is always exact (DBL_DIG).
 */

/** A number literal that is not exact, where it is, and what it would have been read as. */
export interface InexactNumber {
  /** Member names and array indexes leading to it (empty: the whole text is the number). */
  path: string[];
  /** The literal as written. */
  literal: string;
  /** What `JSON.parse` reads it as. */
  read: number;
}

/** Text that could hold an inexact number: 16 digits and points in a row, or an exponent. */
const MAYBE_INEXACT = /[0-9.]{16,}|[0-9][eE]/;
const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const EXPONENT_RE = /[eE]/;

/**
 * A literal's decimal value as `[-]<significant digits>e<point>` (digits without leading or
 * trailing zeros; the value is 0.<digits> x 10^point), `0` for zero of either sign.
 */
function decimalKey(literal: string): string {
  const neg = literal.startsWith("-");
  const text = neg ? literal.slice(1) : literal;
  const e = text.search(EXPONENT_RE);
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exp = e < 0 ? 0 : Number(text.slice(e + 1));
  const dot = mantissa.indexOf(".");
  const all = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  let lead = 0;
  while (lead < all.length && all[lead] === "0") lead++;
  const digits = all.slice(lead).replace(/0+$/, "");
  if (digits === "") return "0";
  const point = (dot < 0 ? mantissa.length : dot) - lead + exp;
  return `${neg ? "-" : ""}${digits}e${point}`;
}

/** True when `literal` (a JSON number) is read by JSON.parse as a double of the same value. */
export function isExactNumberLiteral(literal: string): boolean {
  const n = Number(literal);
  return Number.isFinite(n) && decimalKey(literal) === decimalKey(String(n));
}

interface Frame {
  array: boolean;
  index: number;
  /** The current member name's JSON token (with quotes), decoded only for a report. */
  name: string;
  nameNext: boolean;
}

function pathOf(stack: readonly Frame[]): string[] {
  return stack.map((f) => (f.array ? String(f.index) : (JSON.parse(f.name) as string)));
}

/**
 * The first inexact number of `text`, in document order, or undefined when every number is
 * exact. `text` must be JSON that `JSON.parse` accepts (call it after parsing).
 */
export function findInexactNumber(text: string): InexactNumber | undefined {
  if (!MAYBE_INEXACT.test(text)) return undefined;
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote; in an object's name position it is the name.
      const start = i++;
      for (;;) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i += 2;
        else if (d === 0x22 || Number.isNaN(d)) break;
        else i++;
      }
      i++;
      const top = stack[stack.length - 1];
      if (top && !top.array && top.nameNext) {
        top.name = text.slice(start, i);
        top.nameNext = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({ array: c === 0x5b, index: 0, name: '""', nameNext: c === 0x7b });
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      i++;
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else if (top) top.nameNext = true;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER_RE.lastIndex = i;
      const literal = NUMBER_RE.exec(text)?.[0] ?? text[i] ?? "";
      i += literal.length;
      if (!isExactNumberLiteral(literal)) return { path: pathOf(stack), literal, read: Number(literal) };
    } else {
      i++; // white space, ':', the letters of true, false and null
    }
  }
  return undefined;
}

/**
 * The sentence for `found`: `<field> <literal> cannot be read exactly: ...`, naming what it
 * would be read as; the field is its path joined with "." or `whole` for an empty path.
 */
export function describeInexactNumber(found: InexactNumber, whole: string): string {
  const field = found.path.length > 0 ? found.path.join(".") : whole;
  return `${field} ${found.literal} cannot be read exactly: a JSON number is an IEEE 754 double (RFC 7493) and this one would be read as ${String(found.read)}; send at most 15 significant digits`;
}
