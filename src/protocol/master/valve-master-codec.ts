/**
 * Valve master server query and reply, as Valve's "Master Server Query Protocol" page describes them
 * (docs/list-sources.md).
 *
 * Request (no FF FF FF FF header):
 *   31 | region u8 | seed "IP:port" NUL | filter NUL
 * Reply:
 *   FF FF FF FF 66 0A | entries of 6 bytes: ip[4], port u16 BIG-endian | ... | 00 00 00 00 00 00 = end of list
 * About 231 entries fit one 1400-byte packet; to page, the last address of a batch is the next request's seed.
 * Deviations seen: none recorded yet; a reply whose entry area is not a multiple of 6 is MALFORMED.
 */
import { ProtocolError } from "../errors";
import type { ServerAddress } from "../types";
import { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";

export const A2M_GET_SERVERS_BATCH2 = 0x31;
export const M2A_SERVER_BATCH_HEADER = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x66, 0x0a]);
const ENTRY_BYTES = 6;

export const MASTER_REGIONS = {
  "us-east": 0x00,
  "us-west": 0x01,
  "south-america": 0x02,
  europe: 0x03,
  asia: 0x04,
  australia: 0x05,
  "middle-east": 0x06,
  africa: 0x07,
  rest: 0xff,
} as const;

export type MasterRegionName = keyof typeof MASTER_REGIONS;
/** Every region code, in the order a full sweep visits them. */
export const ALL_MASTER_REGION_CODES: readonly number[] = Object.values(MASTER_REGIONS);

export function isMasterRegionCode(value: number): boolean {
  return ALL_MASTER_REGION_CODES.includes(value);
}

export function masterRegionName(code: number): MasterRegionName | undefined {
  return (Object.keys(MASTER_REGIONS) as MasterRegionName[]).find(
    (name) => MASTER_REGIONS[name] === code,
  );
}

/** The seed that starts a listing. */
export const FIRST_SEED: ServerAddress = { host: "0.0.0.0", port: 0 };

export interface MasterQuery {
  region: number;
  seed: ServerAddress;
  filter: string;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function formatAddress(address: ServerAddress): string {
  return `${address.host}:${address.port}`;
}

/** Parses "IPv4:port" (the only form master entries and seeds take). */
export function parseIpv4Address(text: string): ServerAddress {
  const colon = text.lastIndexOf(":");
  const host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (colon < 0 || !IPV4.test(host) || !/^\d{1,5}$/.test(portText) || Number(portText) > 0xffff) {
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `${JSON.stringify(text)} is not an IPv4 address with a port (a.b.c.d:port)`,
    );
  }
  return { host, port: Number(portText) };
}

export function encodeMasterQuery(query: MasterQuery): Buffer {
  if (!Number.isInteger(query.region) || query.region < 0 || query.region > 0xff) {
    throw new ProtocolError("INVALID_ARGUMENT", `region code ${query.region} is not a byte`);
  }
  if (query.filter.includes("\0"))
    throw new ProtocolError("INVALID_ARGUMENT", "master filter contains a NUL byte");
  const seed = formatAddress(parseIpv4Address(formatAddress(query.seed)));
  return new PacketWriter()
    .u8(A2M_GET_SERVERS_BATCH2)
    .u8(query.region)
    .cstring(seed, "latin1")
    .cstring(query.filter)
    .toBuffer();
}

/** Decodes a request (the simulated master reads them). */
export function decodeMasterQuery(packet: Buffer): MasterQuery {
  const r = new PacketReader(packet);
  const type = r.u8("request type");
  if (type !== A2M_GET_SERVERS_BATCH2) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      `master request type 0x${type.toString(16)} is not 0x31`,
      { offset: 0 },
    );
  }
  const region = r.u8("region");
  const seedOffset = r.offset;
  const seedText = r.cstringLatin1("seed");
  let seed: ServerAddress;
  try {
    seed = parseIpv4Address(seedText);
  } catch (err) {
    throw new ProtocolError(
      "MALFORMED",
      `master request seed ${JSON.stringify(seedText)} is not IP:port`,
      { offset: seedOffset, cause: err },
    );
  }
  // Old clients end the packet without the filter's NUL; accept the filter up to the end then.
  const filter =
    r.remaining === 0
      ? ""
      : r.buffer
          .subarray(r.offset)
          .toString("utf8")
          .replace(/\0[\s\S]*$/, "");
  return { region, seed, filter };
}

export interface MasterBatch {
  /** Addresses in this packet, in the master's order, without the end marker. */
  addresses: ServerAddress[];
  /** True when the packet carried 0.0.0.0:0: the listing is complete. */
  end: boolean;
}

export function decodeMasterResponse(packet: Buffer): MasterBatch {
  const r = new PacketReader(packet);
  const header = r.bytes(M2A_SERVER_BATCH_HEADER.length, "master reply header");
  if (!header.equals(M2A_SERVER_BATCH_HEADER)) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      `master reply header ${header.toString("hex")} is not ffffffff660a`,
      { offset: 0 },
    );
  }
  if (r.remaining % ENTRY_BYTES !== 0) {
    throw new ProtocolError(
      "MALFORMED",
      `master reply entries take ${r.remaining} bytes, not a multiple of 6`,
      { offset: r.offset },
    );
  }
  const addresses: ServerAddress[] = [];
  while (!r.atEnd) {
    // Four octets read one by one, not as a 4-byte slice: a Buffer object per address is garbage at once.
    const a = r.u8("address");
    const b = r.u8("address");
    const c = r.u8("address");
    const d = r.u8("address");
    const port = r.u16be("port");
    if (port === 0 && (a | b | c | d) === 0) return { addresses, end: true };
    addresses.push({ host: `${a}.${b}.${c}.${d}`, port });
  }
  return { addresses, end: false };
}

/** Encodes one reply packet (the simulated master sends them). */
export function encodeMasterResponse(addresses: readonly ServerAddress[], end: boolean): Buffer {
  const w = new PacketWriter().bytes(M2A_SERVER_BATCH_HEADER);
  for (const address of [...addresses, ...(end ? [FIRST_SEED] : [])]) {
    const { host, port } = parseIpv4Address(formatAddress(address));
    for (const octet of host.split(".")) w.u8(Number(octet));
    w.u16be(port);
  }
  return w.toBuffer();
}
