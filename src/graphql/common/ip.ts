/**
 * IP literals as the API accepts them: read as the crawler reads the addresses it stores
 * (src/crawler/address-policy.ts, readIpLiteral): canonical dotted quads only (ipaddr.js also takes '127.1'
 * and '0x7f.0.0.1', which no one means), IPv6 bracketed or not, IPv4-mapped addresses read as IPv4.
 */
import ipaddr from "ipaddr.js";
import { readIpLiteral } from "../../crawler/address-policy";

export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  return readIpLiteral(text.trim())?.ip ?? null;
}

/** A CIDR range with a canonical address part, or null. */
export function parseCidr(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return null;
  const ip = parseIp(m[1] as string);
  const bits = Number(m[2]);
  if (!ip || bits > (ip.kind() === "ipv4" ? 32 : 128)) return null;
  return [ip, bits];
}

/** The range's network address and prefix: '203.0.113.77/24' → '203.0.113.0/24'. */
export function networkText([ip, bits]: [ipaddr.IPv4 | ipaddr.IPv6, number]): string {
  const bytes = ip.toByteArray().map((b, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
  return `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
}
