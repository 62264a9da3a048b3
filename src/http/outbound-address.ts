/**
 * Which addresses an outbound connection may go to: the classifier and the policy.
 *
 * Every connection the service opens to a destination chosen by input (webhook delivery, an
 * acknowledgement domain's key list, the rate source) goes through `refusal` with the address
 * it is about to connect to (./outbound.ts). Only public unicast addresses pass by default:
 * loopback (127.0.0.0/8, ::1), RFC 1918, link-local (169.254.0.0/16, fe80::/10: cloud metadata
 * lives there), CGNAT 100.64.0.0/10, unique-local fc00::/7, site-local fec0::/10, 0.0.0.0/8
 * and ::, multicast, broadcast, and the reserved, documentation and benchmarking ranges are
 * refused. An IPv6 form that carries an IPv4 address (mapped ::ffff:0:0/96, compatible ::/96,
 * translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged by the IPv4
 * address inside it; local-use NAT64 (64:ff9b:1::/48) and Teredo (2001::/32) are refused, and
 * any other IPv6 address outside global unicast 2000::/3 is reserved.
 *
 * Text is parsed with ipaddr.js, which reads every IPv4 form the WHATWG URL parser and
 * inet_aton accept (`2130706433`, `127.1`, `0x7f.1`, `0177.0.0.1`), so an odd literal is
 * judged as the address it names; IPv6 text is first put in the URL parser's canonical form.
 * Pure: no I/O.
 */
import ipaddr from "ipaddr.js";

/** What kind of destination an address is; only `public` passes without a setting. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "carrier-grade-nat"
  | "unique-local"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "not-an-address";

/** A classified address: its canonical text and class. */
export interface ClassifiedAddress {
  /** Canonical text (IPv4 dotted quad, IPv6 RFC 5952), or the input for `not-an-address`. */
  readonly address: string;
  readonly class: AddressClass;
  /** The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4), if any. */
  readonly embeddedV4?: string;
}

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

const V4_CLASSES: Record<string, AddressClass> = {
  unicast: "public",
  loopback: "loopback",
  private: "private",
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade-nat",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
};

const V6_CLASSES: Record<string, AddressClass> = {
  unicast: "public",
  loopback: "loopback",
  linkLocal: "link-local",
  uniqueLocal: "unique-local",
  deprecatedSiteLocal: "private",
  unspecified: "unspecified",
  multicast: "multicast",
};

const cidr = (text: string): [Addr, number] => ipaddr.parseCIDR(text);
const GLOBAL_UNICAST_V6 = cidr("2000::/3");
const NAT64_WELL_KNOWN = cidr("64:ff9b::/96");
const NAT64_LOCAL = cidr("64:ff9b:1::/48");
const SIX_TO_FOUR = cidr("2002::/16");
const TRANSLATED = cidr("::ffff:0:0:0/96");
const COMPATIBLE = cidr("::/96");

function classifyV4(a: ipaddr.IPv4): AddressClass {
  return V4_CLASSES[a.range()] ?? "reserved";
}

/** The IPv4 address carried in the bytes [from, from + 4) of `a`. */
function v4At(a: ipaddr.IPv6, from: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(a.toByteArray().slice(from, from + 4));
}

/** The IPv4 address an IPv6 form carries, for the forms judged by it. */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (a.isIPv4MappedAddress() || a.match(TRANSLATED) || a.match(NAT64_WELL_KNOWN)) return v4At(a, 12);
  if (a.match(SIX_TO_FOUR)) return v4At(a, 2);
  // ::/96 holds :: and ::1 too; the rest are deprecated "IPv4-compatible" addresses.
  if (a.match(COMPATIBLE) && a.range() !== "unspecified" && a.range() !== "loopback") return v4At(a, 12);
  return undefined;
}

function classifyV6(a: ipaddr.IPv6): { class: AddressClass; embeddedV4?: string } {
  const v4 = embeddedV4(a);
  if (v4) {
    const inner = classifyV4(v4);
    // A compatible (::a.b.c.d) form of a public address is unroutable: reserved.
    const isCompatible = a.match(COMPATIBLE) && !a.isIPv4MappedAddress();
    return { class: inner === "public" && isCompatible ? "reserved" : inner, embeddedV4: v4.toString() };
  }
  if (a.match(NAT64_LOCAL)) return { class: "private" };
  const known = V6_CLASSES[a.range()];
  if (known === "public") return { class: a.match(GLOBAL_UNICAST_V6) ? "public" : "reserved" };
  return { class: known ?? "reserved" };
}

/**
 * IPv6 text in the WHATWG URL parser's canonical form (as a URL host, and so a connection,
 * reads it): ipaddr.js alone would read the compatible `::8.8.8.8` as the mapped `::ffff:8.8.8.8`.
 */
function canonicalV6(text: string): string | undefined {
  const zone = text.indexOf("%");
  const bare = zone === -1 ? text : text.slice(0, zone);
  try {
    const host = new URL(`http://[${bare}]/`).hostname;
    return `${host.slice(1, -1)}${zone === -1 ? "" : text.slice(zone)}`;
  } catch {
    return undefined;
  }
}

function parse(text: string): Addr | undefined {
  let bare: string | undefined = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (bare.includes(":")) bare = canonicalV6(bare);
  if (bare === undefined || !ipaddr.isValid(bare)) return undefined;
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

/** Classifies an address given as text (any IPv4 literal form, IPv6 with or without brackets). */
export function classifyAddress(text: string): ClassifiedAddress {
  const a = parse(text);
  if (!a) return { address: text, class: "not-an-address" };
  if (a.kind() === "ipv4") return { address: a.toString(), class: classifyV4(a as ipaddr.IPv4) };
  const v6 = a as ipaddr.IPv6;
  return { address: v6.toRFC5952String(), ...classifyV6(v6) };
}

/** True when `text` is an IP address in any form ipaddr.js reads (`10.0.0.1`, `2130706433`, `::1`). */
export function isIpLiteral(text: string): boolean {
  return parse(text) !== undefined;
}

/** The outbound policy: what may be reached besides public unicast addresses. */
export interface OutboundPolicy {
  /** WRIT_OUTBOUND_ALLOW_LOOPBACK=1: 127.0.0.0/8 and ::1 (and their IPv6 forms) pass. */
  readonly allowLoopback: boolean;
  /** WRIT_OUTBOUND_ALLOW: further ranges that pass (CIDR text, canonical). */
  readonly allow: readonly string[];
}

/** The production default: public unicast only. */
export const STRICT_OUTBOUND: OutboundPolicy = Object.freeze({ allowLoopback: false, allow: Object.freeze([]) });

/** Public unicast and loopback (`writ dev` and tests). */
export const LOOPBACK_OUTBOUND: OutboundPolicy = Object.freeze({ allowLoopback: true, allow: Object.freeze([]) });

/** Parses one WRIT_OUTBOUND_ALLOW entry (`10.1.0.0/16`, `fd00::/8`, or one address); canonical CIDR text, or undefined. */
export function parseAllowEntry(entry: string): string | undefined {
  const text = entry.trim();
  try {
    if (text.includes("/")) {
      if (!ipaddr.isValidCIDR(text)) return undefined;
      const [a, bits] = ipaddr.parseCIDR(text);
      return `${a.kind() === "ipv6" ? (a as ipaddr.IPv6).toRFC5952String() : a.toString()}/${bits}`;
    }
    const a = parse(text);
    if (!a) return undefined;
    return a.kind() === "ipv4" ? `${a.toString()}/32` : `${(a as ipaddr.IPv6).toRFC5952String()}/128`;
  } catch {
    return undefined;
  }
}

function allowedByList(policy: OutboundPolicy, candidates: readonly Addr[]): boolean {
  for (const entry of policy.allow) {
    const range = ipaddr.parseCIDR(entry);
    for (const c of candidates) if (c.kind() === range[0].kind() && c.match(range)) return true;
  }
  return false;
}

/**
 * The classification of `address` when `policy` refuses to connect to it, or null when it may
 * be connected to. Text that is not an address is refused.
 */
export function refusal(policy: OutboundPolicy, address: string): ClassifiedAddress | null {
  const c = classifyAddress(address);
  if (c.class === "public") return null;
  if (c.class === "loopback" && policy.allowLoopback) return null;
  if (c.class !== "not-an-address" && policy.allow.length > 0) {
    const candidates = [parse(c.address), c.embeddedV4 !== undefined ? parse(c.embeddedV4) : undefined].filter((x): x is Addr => x !== undefined);
    if (allowedByList(policy, candidates)) return null;
  }
  return c;
}
