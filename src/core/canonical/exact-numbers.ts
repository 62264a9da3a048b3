/**
 * Exact JSON numbers (I-JSON, RFC 7493 section 2.2): a number literal of a JSON text is exact
 * when the double `JSON.parse` reads it as has the same decimal value as the literal, i.e. the
 * shortest form of that double (`String(n)`) names the literal's value. `50.000000000000001`
 * is not (it is read as 50), nor `1e400` (Infinity) or `1e-400` (0), nor
 * `12345678901234567890`; `0.1`, `1.10`, `1e2` and `-0` are. Text whose every number is exact
 * can be read with `JSON.parse` and its numbers turned into minor units from `String(n)`
 * without ever changing an amount (src/core/money).
 *
 * Cost: one regular-expression pass over the text's strings and number tokens, about what
 * `JSON.parse` costs; only a literal of 16 or more characters or with an exponent is compared
 * (one of at most 15 significant digits in the normal range is always exact: DBL_DIG). The
 * path of an inexact one is found by a second pass up to it, without recursion.
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

/**
 * A string (skipped) or a number literal without its sign (every match is one token of the
 * text: strings are consumed whole, so a number never starts inside one).
 */
const TOKEN_RE = /"[^"\\]*(?:\\.[^"\\]*)*"|[0-9][0-9.eE+-]*/g;
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

/**
 * The first inexact number of `text`, in document order, or undefined when every number is
 * exact. `text` must be JSON that `JSON.parse` accepts (call it after parsing).
 */
export function findInexactNumber(text: string): InexactNumber | undefined {
  TOKEN_RE.lastIndex = 0;
  for (let m = TOKEN_RE.exec(text); m !== null; m = TOKEN_RE.exec(text)) {
    const token = m[0];
    // A string, or a literal of at most 15 characters without an exponent (always exact).
    if (token.charCodeAt(0) === 0x22 || (token.length < 16 && !EXPONENT_RE.test(token))) continue;
    const literal = text.charCodeAt(m.index - 1) === 0x2d ? `-${token}` : token;
    if (isExactNumberLiteral(literal)) continue;
    return { path: pathTo(text, m.index), literal, read: Number(literal) };
  }
  return undefined;
}

/** The member names and array indexes leading to the value at `offset` (one pass, no recursion). */
function pathTo(text: string, offset: number): string[] {
  // One entry per open container: -1 for an object (its current name in `names`), else the index.
  const indexes: number[] = [];
  const names: string[] = [];
  let nameNext = false;
  let i = 0;
  while (i < offset) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i++;
      for (;;) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i += 2;
        else if (d === 0x22 || Number.isNaN(d)) break;
        else i++;
      }
      i++;
      if (nameNext) {
        names[names.length - 1] = text.slice(start, i);
        nameNext = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      indexes.push(c === 0x7b ? -1 : 0);
      names.push('""');
      nameNext = c === 0x7b;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      indexes.pop();
      names.pop();
      nameNext = false;
      i++;
    } else if (c === 0x2c) {
      const top = indexes.length - 1;
      if ((indexes[top] ?? -1) >= 0) indexes[top] = (indexes[top] ?? 0) + 1;
      else nameNext = top >= 0;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER_RE.lastIndex = i;
      i += Math.max(1, NUMBER_RE.exec(text)?.[0].length ?? 1);
    } else {
      i++; // white space, ':', the letters of true, false and null
    }
  }
  return indexes.map((k, d) => (k >= 0 ? String(k) : (JSON.parse(names[d] ?? '""') as string)));
}

/**
 * The sentence for `found`: `<field> <literal> cannot be read exactly: ...`, naming what it
 * would be read as; the field is its path joined with "." or `whole` for an empty path.
 */
export function describeInexactNumber(found: InexactNumber, whole: string): string {
  const field = found.path.length > 0 ? found.path.join(".") : whole;
  return `${field} ${found.literal} cannot be read exactly: a JSON number is an IEEE 754 double (RFC 7493) and this one would be read as ${String(found.read)}; send at most 15 significant digits`;
}
