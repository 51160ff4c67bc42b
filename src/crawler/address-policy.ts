/**
 * Which addresses the crawler may send to (docs/crawler.md, "Address policy"): gsindex must never become a
 * scanner or a reflector. Only public unicast IP literals are queried; private, reserved, loopback,
 * link-local, multicast, broadcast, unspecified and translated ranges are refused, and host names are
 * never resolved, unless the configured allow-list names the range or the exact host name. The check
 * is made at send time (not trusted from the database), against the blocked ranges too.
 */
import { isIPv4 } from "node:net";
import ipaddr from "ipaddr.js";
import type { AllowEntry } from "../shared/config";

export type AddressVerdict =
  | { queryable: true; ip: string | null; reason: "public" | "allow-listed" }
  | {
      queryable: false;
      ip: string | null;
      reason: "relay" | "non-public" | "host-name" | "blocked" | "invalid";
    };

/** Steam Datagram Relay "fake IPs": listed by masters, never directly queryable. */
const SDR_RELAY: [ipaddr.IPv4, number] = ipaddr.parseCIDR("169.254.0.0/16") as [
  ipaddr.IPv4,
  number,
];

export interface AddressPolicy {
  check(host: string): AddressVerdict;
}

/** The octets of a dotted quad that node:net's isIPv4 accepted: four decimal numbers, 0-255 each. */
function octetsOf(quad: string): number[] {
  const octets = [0, 0, 0, 0];
  let part = 0;
  for (let i = 0; i < quad.length; i++) {
    const code = quad.charCodeAt(i);
    if (code === 0x2e) part++;
    else octets[part] = octets[part]! * 10 + (code - 0x30);
  }
  return octets;
}

/** An IP literal read: the address, and its canonical text (the inet column's). */
export interface IpLiteral {
  ip: ipaddr.IPv4 | ipaddr.IPv6;
  text: string;
}

/**
 * The address an IP literal stands for (IPv4 only as a canonical dotted quad; IPv6 bracketed or not, an
 * IPv4-mapped one as its IPv4), or null for anything else: host names are never resolved.
 */
export function readIpLiteral(host: string): IpLiteral | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  // ipaddr.isValid accepts odd IPv4 forms ('0x7f.1', '127.1'); insist on the canonical dotted quad. isIPv4
  // accepts exactly that (no leading zeros, no octal or hex) with one regex test, and such a quad is its own
  // canonical text. Every listed and queried address passes here: with ipaddr.js's own check and parse a
  // policy check took 0.8-1.0 us and left 1.8 kB of garbage, now 0.2 us and 0.3 kB (bench/crawl/address-check.ts).
  if (isIPv4(bare)) return { ip: new ipaddr.IPv4(octetsOf(bare)), text: bare };
  if (bare.includes(":") && ipaddr.IPv6.isValid(bare)) {
    const v6 = ipaddr.IPv6.parse(bare);
    const ip = v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
    return { ip, text: ip.toString() };
  }
  return null;
}

function matches(
  ip: ipaddr.IPv4 | ipaddr.IPv6,
  range: [ipaddr.IPv4 | ipaddr.IPv6, number],
): boolean {
  const [net, bits] = range;
  if (ip.kind() !== net.kind()) return false;
  return ip.kind() === "ipv4"
    ? (ip as ipaddr.IPv4).match(net as ipaddr.IPv4, bits)
    : (ip as ipaddr.IPv6).match(net as ipaddr.IPv6, bits);
}

/** Canonical text of an IP literal (for the inet column), or null for anything else. */
export function ipLiteral(host: string): string | null {
  return readIpLiteral(host)?.text ?? null;
}

export function isRelayAddress(host: string): boolean {
  const address = readIpLiteral(host);
  return address !== null && matches(address.ip, SDR_RELAY);
}

export function createAddressPolicy(
  allowList: readonly AllowEntry[],
  blocked: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][] = [],
): AddressPolicy {
  const allowedHosts = new Set(allowList.flatMap((e) => (e.kind === "host" ? [e.name] : [])));
  const allowedRanges = allowList.flatMap((e) => (e.kind === "cidr" ? [e.range] : []));
  return {
    check(host: string): AddressVerdict {
      const address = readIpLiteral(host);
      if (address === null) {
        if (allowedHosts.has(host.toLowerCase()))
          return { queryable: true, ip: null, reason: "allow-listed" };
        return {
          queryable: false,
          ip: null,
          reason: /^[a-z0-9.-]+$/i.test(host) ? "host-name" : "invalid",
        };
      }
      const { ip, text } = address;
      if (blocked.some((r) => matches(ip, r)))
        return { queryable: false, ip: text, reason: "blocked" };
      if (allowedRanges.some((r) => matches(ip, r)))
        return { queryable: true, ip: text, reason: "allow-listed" };
      if (matches(ip, SDR_RELAY)) return { queryable: false, ip: text, reason: "relay" };
      return ip.range() === "unicast"
        ? { queryable: true, ip: text, reason: "public" }
        : { queryable: false, ip: text, reason: "non-public" };
    },
  };
}

/** Parse blocked_range rows (inet text such as '10.0.0.0/8' or '1.2.3.4/32'). Bad rows are skipped. */
export function parseBlockedRanges(
  cidrs: readonly string[],
): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  const out: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const text of cidrs) {
    try {
      out.push(
        text.includes("/")
          ? ipaddr.parseCIDR(text)
          : [ipaddr.parse(text), ipaddr.parse(text).kind() === "ipv4" ? 32 : 128],
      );
    } catch {
      // An inet column only holds valid values; nothing to do for the impossible case.
    }
  }
  return out;
}
