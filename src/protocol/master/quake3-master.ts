/**
 * The Quake 3 master protocol (ioquake3 / dpmaster): `getservers` → `getserversResponse` datagrams of
 * fixed-size address records, until the `\EOT` marker. The "welcome extra" of issue 8: a master for
 * Quake 3 family servers, as the Valve master is for A2S servers.
 *
 * | bytes                                   | meaning                                                  |
 * |-----------------------------------------|----------------------------------------------------------|
 * | FF FF FF FF "getservers" [game] P [kw…] | request: P = the game's network protocol (Q3 68), keywords `empty`, `full` |
 * | FF FF FF FF "getservers[Ext]Response"   | reply header (no newline)                                |
 * | "\" + 4-byte IPv4 + u16be port          | one server                                               |
 * | "/" + 16-byte IPv6 + u16be port         | one server (getserversExt only)                          |
 * | "\EOT" 00 00 00                         | the last datagram of the listing (some masters: EOF)     |
 *
 * Records are read by size, never by splitting on `\`: an address byte may be 0x5C. An `EOT` counts
 * only where no whole record could follow (an address 69.79.84.x starts with "EOT" too).
 */
import { ProtocolError } from "../errors";
import type { HandlerResult, RemoteSession } from "../transport/udp-transport";
import type { QueryOptions, ServerAddress } from "../types";
import {
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  QUAKE3_MASTER_ADDRESSES_PER_DATAGRAM,
} from "../defaults";
import { defaultTransport } from "../transport/default-transport";
import { startDeadline } from "./deadline";
import type { UdpTransport } from "../transport/udp-transport";

const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);
export const QUAKE3_MASTER_RESPONSE = "getserversResponse";
export const QUAKE3_MASTER_EXT_RESPONSE = "getserversExtResponse";
/** Quake 3 1.32's network protocol, what ioquake3's master lists by default. */
export const QUAKE3_PROTOCOL_VERSION = 68;

export interface Quake3MasterRequest {
  /** The game's network protocol number (Q3 68, OpenArena 71, Urban Terror 68, Xonotic 3). */
  protocolVersion: number;
  /** dpmaster games name themselves first (`getservers Xonotic 3`); Quake 3 itself does not. */
  gameName?: string;
  /** Include empty and full servers. @defaultValue true */
  includeEmptyAndFull?: boolean;
  /** getserversExt: IPv6 records too (dpmaster). @defaultValue false */
  extended?: boolean;
}

export function encodeQuake3MasterRequest(request: Quake3MasterRequest): Buffer {
  if (!Number.isInteger(request.protocolVersion) || request.protocolVersion < 0) {
    throw new ProtocolError("INVALID_ARGUMENT", "protocolVersion must be a whole number");
  }
  if (request.gameName !== undefined && !/^[\x21-\x7e]{1,64}$/.test(request.gameName)) {
    throw new ProtocolError("INVALID_ARGUMENT", "gameName must be printable ASCII without spaces");
  }
  const words = [request.extended === true ? "getserversExt" : "getservers"];
  if (request.gameName !== undefined) words.push(request.gameName);
  words.push(String(request.protocolVersion));
  if (request.includeEmptyAndFull !== false) words.push("empty", "full");
  if (request.extended === true) words.push("ipv4", "ipv6");
  return Buffer.concat([OOB, Buffer.from(words.join(" "), "latin1")]);
}

export interface Quake3MasterDatagram {
  servers: ServerAddress[];
  /** True for the last datagram of a listing (`\EOT`). */
  end: boolean;
}

function ipv6Text(bytes: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return new URL(`http://[${groups.join(":")}]`).hostname.slice(1, -1);
}

function isEndMarker(packet: Buffer, at: number): boolean {
  const word = packet.subarray(at, at + 3).toString("latin1");
  if (word !== "EOT" && word !== "EOF") return false;
  // Only where the rest is padding: a record 69.79.84.x also starts with "EOT".
  return packet.subarray(at + 3).every((b) => b === 0);
}

export function decodeQuake3MasterResponse(packet: Buffer): Quake3MasterDatagram {
  if (packet.length < 4 || !packet.subarray(0, 4).equals(OOB)) {
    throw new ProtocolError(
      packet.length < 4 ? "TRUNCATED" : "UNEXPECTED_RESPONSE",
      "not an out-of-band packet (expected FF FF FF FF)",
      { offset: 0 },
    );
  }
  let offset = 4;
  const ext =
    packet.subarray(offset, offset + QUAKE3_MASTER_EXT_RESPONSE.length).toString("latin1") ===
    QUAKE3_MASTER_EXT_RESPONSE;
  const header = ext ? QUAKE3_MASTER_EXT_RESPONSE : QUAKE3_MASTER_RESPONSE;
  if (packet.subarray(offset, offset + header.length).toString("latin1") !== header) {
    throw new ProtocolError("UNEXPECTED_RESPONSE", "not a getserversResponse", { offset });
  }
  offset += header.length;
  const servers: ServerAddress[] = [];
  while (offset < packet.length) {
    const separator = packet[offset]!;
    if (separator === 0x5c && isEndMarker(packet, offset + 1)) return { servers, end: true };
    if (separator === 0x5c) {
      if (offset + 7 > packet.length)
        throw new ProtocolError("TRUNCATED", "packet ends inside an IPv4 record", { offset });
      const host = [...packet.subarray(offset + 1, offset + 5)].join(".");
      servers.push({ host, port: packet.readUInt16BE(offset + 5) });
      offset += 7;
    } else if (separator === 0x2f && ext) {
      if (offset + 19 > packet.length)
        throw new ProtocolError("TRUNCATED", "packet ends inside an IPv6 record", { offset });
      servers.push({
        host: ipv6Text(packet.subarray(offset + 1, offset + 17)),
        port: packet.readUInt16BE(offset + 17),
      });
      offset += 19;
    } else if (separator === 0 && packet.subarray(offset).every((b) => b === 0)) {
      break; // trailing padding
    } else {
      throw new ProtocolError(
        "MALFORMED",
        `unexpected record separator 0x${separator.toString(16)}`,
        { offset },
      );
    }
  }
  return { servers, end: false };
}

/** Server side (simulator, tests): the listing in datagrams of at most `perDatagram` records, EOT last. */
export function encodeQuake3MasterResponse(
  servers: readonly ServerAddress[],
  options: { perDatagram?: number; extended?: boolean } = {},
): Buffer[] {
  const perDatagram = options.perDatagram ?? QUAKE3_MASTER_ADDRESSES_PER_DATAGRAM;
  const header = Buffer.concat([
    OOB,
    Buffer.from(
      options.extended === true ? QUAKE3_MASTER_EXT_RESPONSE : QUAKE3_MASTER_RESPONSE,
      "latin1",
    ),
  ]);
  const records = servers.map((s) => {
    const port = Buffer.alloc(2);
    port.writeUInt16BE(s.port);
    if (/^\d+\.\d+\.\d+\.\d+$/.test(s.host))
      return Buffer.concat([Buffer.from([0x5c]), Buffer.from(s.host.split(".").map(Number)), port]);
    if (options.extended !== true)
      throw new ProtocolError("INVALID_ARGUMENT", `IPv6 ${s.host} needs the extended response`);
    const full = new URL(`http://[${s.host}]`).hostname.slice(1, -1);
    const [head = "", tail = ""] = full.split("::");
    const h = head === "" ? [] : head.split(":");
    const t = tail === "" ? [] : tail.split(":");
    const groups = full.includes("::")
      ? [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t]
      : h;
    const bytes = Buffer.alloc(16);
    groups.forEach((g, i) => bytes.writeUInt16BE(Number.parseInt(g, 16), i * 2));
    return Buffer.concat([Buffer.from([0x2f]), bytes, port]);
  });
  const datagrams: Buffer[] = [];
  for (let i = 0; i === 0 || i < records.length; i += perDatagram) {
    datagrams.push(Buffer.concat([header, ...records.slice(i, i + perDatagram)]));
  }
  const last = datagrams.length - 1;
  datagrams[last] = Buffer.concat([datagrams[last]!, Buffer.from("\\EOT\0\0\0", "latin1")]);
  return datagrams;
}

export interface Quake3MasterListOptions extends QueryOptions, Quake3MasterRequest {
  transport?: UdpTransport;
}

export interface Quake3MasterListResult {
  servers: ServerAddress[];
  /** False when the deadline came before the `\EOT` datagram: absences must not count. */
  complete: boolean;
}

/** Lists a Quake 3 master: one request, datagrams until `\EOT` (or the deadline: then partial). */
export async function listQuake3Master(
  master: ServerAddress,
  options: Quake3MasterListOptions,
): Promise<Quake3MasterListResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  // Not AbortSignal.timeout/any: see ./deadline. Timing out aborts with AbortSignal.timeout's reason (TIMEOUT).
  const deadline = startDeadline(
    timeoutMs,
    options.signal,
    new DOMException("The operation was aborted due to timeout", "TimeoutError"),
  );
  const signal = deadline.signal;
  const seen = new Map<string, ServerAddress>();
  let received = false;
  let session: RemoteSession;
  try {
    session = await (options.transport ?? defaultTransport()).acquire(master, signal);
  } catch (err) {
    deadline.dispose();
    throw err;
  }
  try {
    await session.exchange(
      encodeQuake3MasterRequest(options),
      (datagram): HandlerResult<true> => {
        const decoded = decodeQuake3MasterResponse(datagram);
        received = true;
        for (const s of decoded.servers) seen.set(`${s.host}|${s.port}`, s);
        return decoded.end ? { value: true, final: true } : undefined;
      },
      { signal, attemptTimeoutMs: timeoutMs / (retries + 1), retries },
    );
    return { servers: [...seen.values()], complete: true };
  } catch (err) {
    if (err instanceof ProtocolError && err.code === "TIMEOUT" && received)
      return { servers: [...seen.values()], complete: false };
    throw err;
  } finally {
    session.release();
    deadline.dispose();
  }
}
