import { describe, expect, it } from "vitest";
import {
  classifyAddress,
  isIpLiteral,
  LOOPBACK_OUTBOUND,
  parseAllowEntry,
  refusal,
  STRICT_OUTBOUND,
  type AddressClass,
} from "../../../src/http/outbound-address.js";
import { loadOutboundPolicy } from "../../../src/http/outbound-settings.js";

/** [text, class, canonical address] */
const TABLE: [string, AddressClass, string][] = [
  // loopback, in every IPv4 literal form inet_aton and the URL parser read
  ["127.0.0.1", "loopback", "127.0.0.1"],
  ["127.255.255.254", "loopback", "127.255.255.254"],
  ["2130706433", "loopback", "127.0.0.1"],
  ["127.1", "loopback", "127.0.0.1"],
  ["0x7f.1", "loopback", "127.0.0.1"],
  ["0x7f000001", "loopback", "127.0.0.1"],
  ["0177.0.0.1", "loopback", "127.0.0.1"],
  ["017700000001", "loopback", "127.0.0.1"],
  ["::1", "loopback", "::1"],
  ["[::1]", "loopback", "::1"],
  ["0:0:0:0:0:0:0:1", "loopback", "::1"],
  // IPv6 forms that carry an IPv4 address are judged by it
  ["::ffff:127.0.0.1", "loopback", "::ffff:7f00:1"],
  ["::ffff:7f00:1", "loopback", "::ffff:7f00:1"],
  ["[::ffff:7f00:1]", "loopback", "::ffff:7f00:1"],
  ["::7f00:1", "loopback", "::7f00:1"],
  ["::ffff:0:7f00:1", "loopback", "::ffff:0:7f00:1"],
  ["::ffff:10.0.0.5", "private", "::ffff:a00:5"],
  ["::ffff:169.254.169.254", "link-local", "::ffff:a9fe:a9fe"],
  ["64:ff9b::10.0.0.5", "private", "64:ff9b::a00:5"],
  ["64:ff9b::7f00:1", "loopback", "64:ff9b::7f00:1"],
  ["64:ff9b::a9fe:a9fe", "link-local", "64:ff9b::a9fe:a9fe"],
  ["64:ff9b::808:808", "public", "64:ff9b::808:808"],
  ["64:ff9b:1::a00:5", "private", "64:ff9b:1::a00:5"],
  ["2002:a00:5::1", "private", "2002:a00:5::1"],
  ["2002:7f00:1::", "loopback", "2002:7f00:1::"],
  ["2002:808:808::1", "public", "2002:808:808::1"],
  ["::8.8.8.8", "reserved", "::808:808"],
  // RFC 1918, CGNAT, link-local (cloud metadata), this network
  ["10.0.0.5", "private", "10.0.0.5"],
  ["167772165", "private", "10.0.0.5"],
  ["172.16.0.1", "private", "172.16.0.1"],
  ["172.31.255.255", "private", "172.31.255.255"],
  ["192.168.1.1", "private", "192.168.1.1"],
  ["0xc0.0xa8.1.1", "private", "192.168.1.1"],
  ["100.64.0.1", "carrier-grade-nat", "100.64.0.1"],
  ["100.127.255.254", "carrier-grade-nat", "100.127.255.254"],
  ["169.254.169.254", "link-local", "169.254.169.254"],
  ["0xa9fea9fe", "link-local", "169.254.169.254"],
  ["fe80::1", "link-local", "fe80::1"],
  ["fe80::1%eth0", "link-local", "fe80::1%eth0"],
  ["febf::1", "link-local", "febf::1"],
  ["fec0::1", "private", "fec0::1"],
  ["fc00::1", "unique-local", "fc00::1"],
  ["fd12:3456::1", "unique-local", "fd12:3456::1"],
  ["0.0.0.0", "unspecified", "0.0.0.0"],
  ["0", "unspecified", "0.0.0.0"],
  ["0.1.2.3", "unspecified", "0.1.2.3"],
  ["::", "unspecified", "::"],
  // multicast, broadcast, reserved, documentation, benchmarking
  ["224.0.0.1", "multicast", "224.0.0.1"],
  ["239.255.255.250", "multicast", "239.255.255.250"],
  ["ff02::1", "multicast", "ff02::1"],
  ["255.255.255.255", "broadcast", "255.255.255.255"],
  ["240.0.0.1", "reserved", "240.0.0.1"],
  ["192.0.2.1", "reserved", "192.0.2.1"],
  ["198.51.100.7", "reserved", "198.51.100.7"],
  ["203.0.113.9", "reserved", "203.0.113.9"],
  ["198.18.0.1", "reserved", "198.18.0.1"],
  ["192.0.0.8", "reserved", "192.0.0.8"],
  ["2001:db8::1", "reserved", "2001:db8::1"],
  ["2001::1", "reserved", "2001::1"],
  ["100::1", "reserved", "100::1"],
  ["4000::1", "reserved", "4000::1"],
  // public unicast
  ["8.8.8.8", "public", "8.8.8.8"],
  ["1.1.1.1", "public", "1.1.1.1"],
  ["100.63.255.255", "public", "100.63.255.255"],
  ["100.128.0.0", "public", "100.128.0.0"],
  ["172.15.255.255", "public", "172.15.255.255"],
  ["172.32.0.0", "public", "172.32.0.0"],
  ["169.253.255.255", "public", "169.253.255.255"],
  ["2606:4700:4700::1111", "public", "2606:4700:4700::1111"],
  ["2a00:1450:4001:80b::200e", "public", "2a00:1450:4001:80b::200e"],
  // not addresses
  ["example.com", "not-an-address", "example.com"],
  ["localhost", "not-an-address", "localhost"],
  ["256.1.1.1", "not-an-address", "256.1.1.1"],
  ["1.2.3.4.5", "not-an-address", "1.2.3.4.5"],
  ["", "not-an-address", ""],
  ["::ffff::1::", "not-an-address", "::ffff::1::"],
];

describe("classifyAddress", () => {
  it.each(TABLE)("%s is %s", (text, cls, canonical) => {
    const c = classifyAddress(text);
    expect(c.class).toBe(cls);
    expect(c.address).toBe(canonical);
  });

  it("names the IPv4 address an IPv6 form carries", () => {
    expect(classifyAddress("::ffff:7f00:1").embeddedV4).toBe("127.0.0.1");
    expect(classifyAddress("64:ff9b::a00:5").embeddedV4).toBe("10.0.0.5");
    expect(classifyAddress("2002:a00:5::1").embeddedV4).toBe("10.0.0.5");
    expect(classifyAddress("2606:4700:4700::1111").embeddedV4).toBeUndefined();
  });

  it("isIpLiteral holds for every address form, not for names", () => {
    for (const [text, cls] of TABLE) expect(isIpLiteral(text), text).toBe(cls !== "not-an-address");
  });
});

describe("refusal", () => {
  it("the strict policy passes public unicast only", () => {
    for (const [text, cls] of TABLE) expect(refusal(STRICT_OUTBOUND, text) === null, text).toBe(cls === "public");
  });

  it("allowing loopback opens 127.0.0.0/8, ::1 and their IPv6 forms, nothing else", () => {
    for (const [text, cls] of TABLE) expect(refusal(LOOPBACK_OUTBOUND, text) === null, text).toBe(cls === "public" || cls === "loopback");
    expect(refusal(LOOPBACK_OUTBOUND, "0.0.0.0")?.class).toBe("unspecified");
  });

  it("an allow list opens exactly its ranges, also when reached through an IPv6 form", () => {
    const policy = { allowLoopback: false, allow: ["10.20.0.0/16", "fd00:1::/64"] };
    expect(refusal(policy, "10.20.3.4")).toBeNull();
    expect(refusal(policy, "::ffff:10.20.3.4")).toBeNull();
    expect(refusal(policy, "fd00:1::5")).toBeNull();
    expect(refusal(policy, "10.21.0.1")?.class).toBe("private");
    expect(refusal(policy, "fd00:2::5")?.class).toBe("unique-local");
    expect(refusal(policy, "127.0.0.1")?.class).toBe("loopback");
    expect(refusal(policy, "169.254.169.254")?.class).toBe("link-local");
  });
});

describe("WRIT_OUTBOUND_* settings", () => {
  it("default: strict", () => {
    const problems: string[] = [];
    expect(loadOutboundPolicy({}, problems)).toEqual(STRICT_OUTBOUND);
    expect(problems).toEqual([]);
  });

  it("reads the loopback switch and the allow list (canonical CIDRs), reporting what does not load", () => {
    const problems: string[] = [];
    const p = loadOutboundPolicy(
      { WRIT_OUTBOUND_ALLOW_LOOPBACK: "1", WRIT_OUTBOUND_ALLOW: " 10.20.0.0/16, fd00:0001::/64 ,192.168.1.7,, nonsense,10.0.0.0/33" },
      problems,
    );
    expect(p).toEqual({ allowLoopback: true, allow: ["10.20.0.0/16", "fd00:1::/64", "192.168.1.7/32"] });
    expect(problems).toEqual([
      'WRIT_OUTBOUND_ALLOW: "nonsense" is not an address or CIDR range; skipped',
      'WRIT_OUTBOUND_ALLOW: "10.0.0.0/33" is not an address or CIDR range; skipped',
    ]);
    const bad: string[] = [];
    expect(loadOutboundPolicy({ WRIT_OUTBOUND_ALLOW_LOOPBACK: "yes" }, bad).allowLoopback).toBe(false);
    expect(bad).toEqual(["WRIT_OUTBOUND_ALLOW_LOOPBACK must be 0 or 1; using 0"]);
  });

  it("parseAllowEntry refuses what is not a range", () => {
    for (const e of ["", "10.0.0.0/", "/8", "example.com", "10.0.0.0/8/8"]) expect(parseAllowEntry(e), e).toBeUndefined();
  });
});
