/**
 * The small-order points of edwards25519, derived here from the curve equation (not copied from
 * the code under test): the 8 points of order 1, 2, 4 and 8, and all 14 of their 32-byte
 * encodings (the 8 canonical ones, x = 0 with the sign bit set, and y + p for y = 0 and 1).
 * Also the fixed signature that, with the identity as the public key, verifies every payload.
 */
const P = 2n ** 255n - 19n;
const mod = (a: bigint): bigint => ((a % P) + P) % P;
function pow(b: bigint, e: bigint): bigint {
  let r = 1n;
  let x = mod(b);
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) r = (r * x) % P;
    x = (x * x) % P;
  }
  return r;
}
const inv = (a: bigint): bigint => pow(a, P - 2n);
const D = mod(-121665n * inv(121666n));
const SQRT_M1 = pow(2n, (P - 1n) / 4n);

/** A square root mod p, or undefined. */
function sqrt(a: bigint): bigint | undefined {
  let r = pow(a, (P + 3n) / 8n);
  if (mod(r * r - a) !== 0n) r = mod(r * SQRT_M1);
  return mod(r * r - a) === 0n ? r : undefined;
}

type Point = [bigint, bigint];
/** Twisted Edwards addition (a = -1). */
function add([x1, y1]: Point, [x2, y2]: Point): Point {
  const t = mod(D * x1 * x2 * y1 * y2);
  return [mod((x1 * y2 + y1 * x2) * inv(1n + t)), mod((y1 * y2 + x1 * x2) * inv(1n - t))];
}
const onCurve = ([x, y]: Point): boolean => mod(-x * x + y * y - 1n - D * x * x * y * y) === 0n;

function encode(y: bigint, signBit: boolean): string {
  const b = Buffer.from(y.toString(16).padStart(64, "0"), "hex").reverse();
  if (signBit) b[31] = (b[31] ?? 0) | 0x80;
  return b.toString("base64url");
}

/** The 8 small-order points. */
export function smallOrderPoints(): Point[] {
  // An order-8 point T has 2T = (±sqrt(-1), 0), i.e. y^2 = -x^2; on the curve that gives
  // d x^4 - 2 x^2 - 1 = 0, x^2 = (1 ± sqrt(1 + d)) / d.
  const s = sqrt(mod(1n + D));
  if (s === undefined) throw new Error("1 + d has no square root");
  for (const x2 of [mod((1n + s) * inv(D)), mod((1n - s) * inv(D))]) {
    const x = sqrt(x2);
    const y = x === undefined ? undefined : sqrt(mod(-x2));
    if (x === undefined || y === undefined) continue;
    const t: Point = [x, y];
    if (!onCurve(t)) continue;
    const out: Point[] = [[0n, 1n]];
    for (let k = 1; k < 8; k++) out.push(add(out[k - 1] as Point, t));
    const eight = add(out[7] as Point, t);
    const four = out[4] as Point;
    // Order exactly 8: 8T is the identity, 4T is not.
    if (eight[0] !== 0n || eight[1] !== 1n || (four[0] === 0n && four[1] === 1n)) continue;
    return out;
  }
  throw new Error("no order-8 point found");
}

/** Every 32-byte encoding (base64url) of a small-order point: 14 of them. */
export function smallOrderEncodings(): string[] {
  const out = new Set<string>();
  for (const [x, y] of smallOrderPoints()) {
    out.add(encode(y, (x & 1n) === 1n));
    if (x === 0n) out.add(encode(y, true)); // "negative zero": non-canonical
    if (y + P < 2n ** 255n) out.add(encode(y + P, (x & 1n) === 1n)); // y + p: non-canonical
    if (x === 0n && y + P < 2n ** 255n) out.add(encode(y + P, true));
  }
  return [...out];
}

/** The Ed25519 public JWK of encoding `x`. */
export const ed25519Jwk = (x: string): { kty: "OKP"; crv: "Ed25519"; x: string } => ({ kty: "OKP", crv: "Ed25519", x });

/** The identity point's canonical encoding (y = 1), as base64url. */
export const IDENTITY_X = encode(1n, false);

/** R = the identity, S = 0: with the identity as the key, [S]B = R + [k]A holds for every k. */
export const FIXED_SIGNATURE = Buffer.concat([Buffer.from(IDENTITY_X, "base64url"), Buffer.alloc(32)]);
