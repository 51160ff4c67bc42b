/**
 * Offline IP → country (ISO 3166-1 alpha-2, upper case), so that game_server.country is known without
 * asking any service. Data: the npm package @ip-location-db/geo-whois-asn-country (package CC0-1.0; the
 * NRO delegation data inside it is CC BY 4.0, attribution to nro.net: see README.md). Nothing is fetched
 * at run time; a newer dataset comes with a dependency bump.
 *
 * Layout: the package's "-num" CSVs (inclusive ranges sorted by start; nested ones flattened at load, see
 * `flatten`) go into typed arrays, one family at a time and only when first asked (a crawl that lists only
 * IPv4 never loads IPv6):
 * - IPv4: Uint32Array starts + ends and Uint16Array countries (two ASCII letters packed): 334k rows in the
 *   data, a few thousand more once flattened, ~3.4 MB;
 * - IPv6: the 128-bit bounds as four Uint32 words each, same countries array: 216k rows, ~7.4 MB.
 * A lookup is a binary search for the last range starting at or below the address; no BigInt on that path.
 * Measured here (Node 20, 2 shared cores; /tmp script, not a test): IPv4 load 120-190 ms, IPv6 load 170-260 ms;
 * RSS +25 MB after IPv4, +50 MB peak with both while the CSV text is parsed, ~+32 MB after a GC.
 * Lookups: 0.4 µs per IPv4 literal, 3.4-3.7 µs per IPv6 literal (the literal read as the address policy reads
 * it, then ipaddr.js's range classification; bench/crawl/address-check.ts), negligible beside a listing's
 * database write.
 *
 * Only public unicast addresses get a country: loopback, private, link-local (which includes Steam's relay
 * "fake IPs"), reserved, multicast and the like are null, whatever the dataset says.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type ipaddr from "ipaddr.js";
import { readIpLiteral } from "../address-policy";

const PACKAGE = "@ip-location-db/geo-whois-asn-country";
const IPV4_FILE = "geo-whois-asn-country-ipv4-num.csv";
const IPV6_FILE = "geo-whois-asn-country-ipv6-num.csv";

interface V4Table {
  starts: Uint32Array;
  ends: Uint32Array;
  countries: Uint16Array;
}

/** 128-bit bounds as four 32-bit words each, most significant first: word k of range i is at [i * 4 + k]. */
interface V6Table {
  starts: Uint32Array;
  ends: Uint32Array;
  countries: Uint16Array;
}

let v4: V4Table | null = null;
let v6: V6Table | null = null;

function dataFile(name: string): string {
  return join(dirname(require.resolve(`${PACKAGE}/package.json`)), name);
}

/** Two upper-case ASCII letters packed in 16 bits; anything else is a corrupt dataset. */
function packCountry(text: string, line: number, file: string): number {
  const a = text.charCodeAt(0);
  const b = text.charCodeAt(1);
  if (text.length !== 2 || a < 65 || a > 90 || b < 65 || b > 90)
    throw new Error(`${file}:${line}: bad country code '${text}'`);
  return (a << 8) | b;
}

function unpackCountry(code: number): string {
  return String.fromCharCode(code >> 8, code & 0xff);
}

function readData(file: string): string {
  return readFileSync(dataFile(file), "latin1");
}

/** Rows in the text: non-empty lines. */
function countRows(text: string): number {
  let n = 0;
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf("\n", pos);
    if (nl === -1) nl = text.length;
    if (nl > pos && !(nl === pos + 1 && text.charCodeAt(pos) === 13)) n += 1;
    pos = nl + 1;
  }
  return n;
}

/** Split "start,end,CC" lines; calls `row` with the three fields and the 1-based row number. */
function forEachRow(
  file: string,
  text: string,
  row: (start: string, end: string, country: string, line: number) => void,
): void {
  let pos = 0;
  let line = 0;
  while (pos < text.length) {
    let nl = text.indexOf("\n", pos);
    if (nl === -1) nl = text.length;
    const lineEnd = text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    if (lineEnd > pos) {
      line += 1;
      const c1 = text.indexOf(",", pos);
      const c2 = c1 === -1 ? -1 : text.indexOf(",", c1 + 1);
      if (c1 === -1 || c2 === -1 || c2 >= lineEnd)
        throw new Error(`${file}:${line}: expected start,end,country`);
      row(text.slice(pos, c1), text.slice(c1 + 1, c2), text.slice(c2 + 1, lineEnd), line);
    }
    pos = nl + 1;
  }
}

interface Range {
  start: bigint;
  end: bigint;
  country: number;
}

/**
 * The data's ranges are sorted by start but ~2% of them sit inside a wider one (a geofeed entry laid over
 * its registry block, e.g. one BE address inside a DE /23). Flatten them into disjoint ranges where the
 * most specific one (the latest start covering an address) wins, so that a binary search on starts is exact.
 * `emit` receives the disjoint ranges in order.
 */
function flatten(
  file: string,
  text: string,
  emit: (start: bigint, end: bigint, country: number) => void,
): void {
  const open: Range[] = [];
  let cursor = 0n;
  let previousStart = -1n;
  const closeBefore = (limit: bigint): void => {
    for (let top = open.at(-1); top !== undefined && top.end < limit; top = open.at(-1)) {
      open.pop();
      if (cursor <= top.end) {
        emit(cursor, top.end, top.country);
        cursor = top.end + 1n;
      }
    }
  };
  forEachRow(file, text, (startText, endText, countryText, line) => {
    let start: bigint;
    let end: bigint;
    try {
      start = BigInt(startText);
      end = BigInt(endText);
    } catch {
      throw new Error(`${file}:${line}: bad range`);
    }
    if (start < 0n || end < start || end >> 128n !== 0n)
      throw new Error(`${file}:${line}: bad range`);
    if (start < previousStart) throw new Error(`${file}:${line}: ranges not sorted by start`);
    previousStart = start;
    closeBefore(start);
    const top = open.at(-1);
    if (top !== undefined && cursor < start) emit(cursor, start - 1n, top.country);
    if (cursor < start) cursor = start;
    open.push({ start, end, country: packCountry(countryText, line, file) });
  });
  closeBefore(1n << 129n);
}

function loadV4(): V4Table {
  const text = readData(IPV4_FILE);
  // Flattening splits a wide range around each range inside it: at most two extra rows per row.
  const capacity = countRows(text) * 3;
  const starts = new Uint32Array(capacity);
  const ends = new Uint32Array(capacity);
  const countries = new Uint16Array(capacity);
  let n = 0;
  flatten(IPV4_FILE, text, (start, end, country) => {
    if (end > 0xffffffffn) throw new Error(`${IPV4_FILE}: range beyond IPv4`);
    starts[n] = Number(start);
    ends[n] = Number(end);
    countries[n] = country;
    n += 1;
  });
  return { starts: starts.slice(0, n), ends: ends.slice(0, n), countries: countries.slice(0, n) };
}

function putWords(words: Uint32Array, i: number, value: bigint): void {
  for (let k = 0; k < 4; k += 1)
    words[i * 4 + k] = Number((value >> BigInt(96 - 32 * k)) & 0xffffffffn);
}

function loadV6(): V6Table {
  const text = readData(IPV6_FILE);
  const capacity = countRows(text) * 3;
  const starts = new Uint32Array(capacity * 4);
  const ends = new Uint32Array(capacity * 4);
  const countries = new Uint16Array(capacity);
  let n = 0;
  flatten(IPV6_FILE, text, (start, end, country) => {
    putWords(starts, n, start);
    putWords(ends, n, end);
    countries[n] = country;
    n += 1;
  });
  return {
    starts: starts.slice(0, n * 4),
    ends: ends.slice(0, n * 4),
    countries: countries.slice(0, n),
  };
}

function lookupV4(address: number): string | null {
  v4 ??= loadV4();
  const { starts, ends, countries } = v4;
  // Last range whose start is <= address.
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((starts[mid] ?? 0) <= address) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found < 0 || address > (ends[found] ?? 0)) return null;
  return unpackCountry(countries[found] ?? 0);
}

/** words[i * 4 .. i * 4 + 3] <= address (both 128-bit, most significant word first). */
function wordsLte(words: Uint32Array, i: number, address: readonly number[]): boolean {
  for (let k = 0; k < 4; k += 1) {
    const w = words[i * 4 + k] ?? 0;
    const x = address[k] ?? 0;
    if (w !== x) return w < x;
  }
  return true;
}

/** address <= words[i * 4 .. i * 4 + 3]. */
function lteWords(address: readonly number[], words: Uint32Array, i: number): boolean {
  for (let k = 0; k < 4; k += 1) {
    const w = words[i * 4 + k] ?? 0;
    const x = address[k] ?? 0;
    if (w !== x) return x < w;
  }
  return true;
}

function lookupV6(address: readonly number[]): string | null {
  v6 ??= loadV6();
  const { starts, ends, countries } = v6;
  let lo = 0;
  let hi = countries.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (wordsLte(starts, mid, address)) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found < 0 || !lteWords(address, ends, found)) return null;
  return unpackCountry(countries[found] ?? 0);
}

/**
 * Country of an IP literal (IPv4 dotted quad or IPv6, bracketed or not; IPv4-mapped IPv6 counts as its
 * IPv4), or null: not an IP literal (host names are never resolved), not public unicast, or not in the data.
 */
export function countryOfIp(host: string | null): string | null {
  if (host === null) return null;
  const ip = readIpLiteral(host)?.ip;
  if (ip === undefined || ip.range() !== "unicast") return null;
  if (ip.kind() === "ipv4") {
    const [a = 0, b = 0, c = 0, d = 0] = (ip as ipaddr.IPv4).octets;
    return lookupV4(((a << 24) >>> 0) + (b << 16) + (c << 8) + d);
  }
  const parts = (ip as ipaddr.IPv6).parts;
  const words = [0, 1, 2, 3].map((k) => (parts[2 * k] ?? 0) * 0x10000 + (parts[2 * k + 1] ?? 0));
  return lookupV6(words);
}

/** Load both tables now (a process that will look up many addresses may prefer to pay at start). */
export function preloadCountryTables(): void {
  v4 ??= loadV4();
  v6 ??= loadV6();
}
