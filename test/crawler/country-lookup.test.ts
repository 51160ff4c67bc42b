/**
 * Offline IP → country. Expected countries come from the dataset's own human-readable CSV (the lookup
 * reads the numeric one), and a sample of addresses is checked against a naive scan of every row, the
 * most specific range winning, which is what the load-time flattening of nested ranges must preserve.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { countryOfIp } from "../../src/crawler/geo/country-lookup";

const dataDir = dirname(require.resolve("@ip-location-db/geo-whois-asn-country/package.json"));
const textRows = (family: "ipv4" | "ipv6"): string =>
  readFileSync(join(dataDir, `geo-whois-asn-country-${family}.csv`), "utf8");

describe("countryOfIp", () => {
  let v4Text: string;
  let v6Text: string;
  beforeAll(() => {
    v4Text = textRows("ipv4");
    v6Text = textRows("ipv6");
  });

  it.each([
    // [address, the dataset's own row that covers it, expected]
    ["1.1.1.1", "1.1.1.0,1.1.1.255,AU", "AU"],
    ["2.58.197.15", "2.58.197.15,2.58.197.15,BE", "BE"],
    ["2.58.197.14", "2.58.196.0,2.58.197.255,DE", "DE"],
    ["2.58.197.16", "2.58.197.16,2.58.197.255,DE", "DE"],
  ])("%s is in the row %s", (address, row, expected) => {
    expect(v4Text.split("\n")).toContain(row);
    expect(countryOfIp(address)).toBe(expected);
  });

  it("a single address laid inside a wider range wins only for itself", () => {
    // 2.58.196.0/23 is DE with 2.58.197.15 (BE) inside it: both sides of the hole stay DE.
    expect(
      ["2.58.196.0", "2.58.197.14", "2.58.197.15", "2.58.197.16", "2.58.197.255"].map(countryOfIp),
    ).toEqual(["DE", "DE", "BE", "DE", "DE"]);
  });

  it.each([
    ["2001:4860::8888", "2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,US", "US"],
    ["[2a00:1450:4001:82a::200e]", "2a00:1450::,2a00:1457:ffff:ffff:ffff:ffff:ffff:ffff,IE", "IE"],
    [
      "2a00:1457:ffff:ffff:ffff:ffff:ffff:ffff",
      "2a00:1450::,2a00:1457:ffff:ffff:ffff:ffff:ffff:ffff,IE",
      "IE",
    ],
  ])("IPv6 %s is in the row %s", (address, row, expected) => {
    expect(v6Text.split("\n")).toContain(row);
    expect(countryOfIp(address)).toBe(expected);
  });

  it("an IPv4-mapped IPv6 address is looked up as its IPv4", () => {
    expect(countryOfIp("::ffff:1.1.1.1")).toBe("AU");
  });

  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.5.5",
    "192.168.0.10",
    "100.64.0.1",
    "169.254.3.4",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "192.0.2.1",
    "::1",
    "::",
    "fd40:9dc7:b528::1",
    "fe80::1",
    "ff02::1",
    "2001:db8::1",
    "::ffff:127.0.0.1",
  ])("%s (not public unicast) has no country", (address) => {
    expect(countryOfIp(address)).toBeNull();
  });

  it.each([
    null,
    "bombergame.example.org",
    "localhost",
    "",
    "127.1",
    "0x7f.0.0.1",
    "1.1.1.1:27015",
    "not an ip",
  ])("%p (not an IP literal) has no country and is never resolved", (host) => {
    expect(countryOfIp(host)).toBeNull();
  });

  it("agrees with a naive scan of every IPv4 row (most specific range wins)", () => {
    const rows = readFileSync(join(dataDir, "geo-whois-asn-country-ipv4-num.csv"), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => {
        const [s, e, c] = l.split(",");
        return { s: Number(s), e: Number(e), c: c as string };
      });
    const naive = (n: number): string | null => {
      let best: { s: number; e: number; c: string } | null = null;
      for (const r of rows) {
        if (r.s > n) break;
        if (n <= r.e && (best === null || r.s > best.s || (r.s === best.s && r.e < best.e)))
          best = r;
      }
      return best?.c ?? null;
    };
    const toText = (n: number): string =>
      [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
    // Addresses at and around range bounds (where flattening could go wrong), plus random ones.
    const bounds = rows
      .filter((_, i) => i % 997 === 0 || (i > 0 && rows[i]!.s <= rows[i - 1]!.e))
      .slice(0, 300);
    const probes = bounds
      .flatMap((r) => [r.s - 1, r.s, r.e, r.e + 1])
      .filter((n) => n >= 0 && n <= 0xffffffff);
    probes.push(
      ...fc.sample(fc.integer({ min: 0x01000000, max: 0xdfffffff }), { numRuns: 300, seed: 42 }),
    );
    for (const n of probes) {
      const address = toText(n);
      // Non-public addresses are null whatever the data says; everything else must agree with the scan.
      const expected = ipaddr.IPv4.parse(address).range() === "unicast" ? naive(n) : null;
      expect([address, countryOfIp(address)]).toEqual([address, expected]);
    }
  });
});
