/**
 * Quake 3 family (`getstatus` / `getinfo`) and the Quake 2 form (`status` → `print`).
 *
 * Spec: docs/protocols-legacy.md; GameDig's and qstat's Quake 2/3 readers.
 *
 * | bytes                         | meaning                                                      |
 * |-------------------------------|--------------------------------------------------------------|
 * | FF FF FF FF (or FE FF FF FF)  | out-of-band header; some forks add one 01/02 byte after it   |
 * | header word, 0A               | statusResponse / infoResponse / print (Quake 2)              |
 * | \key\value… [0A]              | infostring (one line)                                        |
 * | player lines, each 0A-ended   | `<int> <int> … "<name>" [trailing tokens]`                   |
 *
 * Player lines are decoded generically (leading integers, the name between the first and the LAST
 * quote, then whatever follows), because games disagree on the numbers: score ping (Q3, CoD),
 * score ping team (SOF2, DarkPlaces), score ping "name" team (Warsow), ping "name" (MOHAA).
 * Which number means what is a per-game question answered in quirks.ts during normalisation.
 * Deviations: q3-warsow-* (team after the name), q3-sof2-2 (third number), q3-codmw2-* (blank
 * trailing line), q3-cod-1 (control bytes in the host name).
 */
import { ProtocolError } from "../errors";
import {
  BACKSLASH,
  NEWLINE,
  decodeText,
  encodeInfostring,
  encodeText,
  parseInfostring,
  splitBytes,
} from "./text";
import type { KeyValue, LegacyDecodeOptions } from "./text";

export const OOB_HEADER = Buffer.from([0xff, 0xff, 0xff, 0xff]);
export const QUAKE3_STATUS_RESPONSE = "statusResponse";
export const QUAKE3_INFO_RESPONSE = "infoResponse";
export const QUAKE2_PRINT = "print";

export type QuakeResponseHeader =
  typeof QUAKE3_STATUS_RESPONSE | typeof QUAKE3_INFO_RESPONSE | typeof QUAKE2_PRINT;

export interface QuakePlayerLine {
  /** Every integer before the quoted name, in order (score, ping, … depending on the game). */
  numbers: number[];
  /** Raw name: everything between the first and the last quote of the line. */
  name: string;
  /** Text after the closing quote, leading spaces removed ('' when none), e.g. Warsow's team. */
  afterName: string;
}

export interface QuakeResponse {
  header: QuakeResponseHeader;
  /** The byte between the OOB header and the header word some forks send (01 or 02), or null. */
  prefixByte: number | null;
  /** Infostring pairs in wire order (duplicates kept). */
  info: KeyValue[];
  /** Player lines; always empty for infoResponse. */
  players: QuakePlayerLine[];
}

export interface QuakeRequestOptions {
  /** Echoed by the server as the `challenge` key; lets a client reject stale answers. */
  challenge?: string;
  /** MOHAA wants 02 after the OOB header (LGSL, qstat). */
  prefixByte?: number;
}

function encodeCommand(command: string, terminator: number, options: QuakeRequestOptions): Buffer {
  if (options.challenge !== undefined && !/^[\x21-\x7e]{1,128}$/.test(options.challenge)) {
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      "challenge must be 1-128 printable ASCII characters without spaces",
    );
  }
  const text = options.challenge === undefined ? command : `${command} ${options.challenge}`;
  const prefix = options.prefixByte === undefined ? [] : [options.prefixByte];
  return Buffer.concat([
    OOB_HEADER,
    Buffer.from(prefix),
    Buffer.from(text, "latin1"),
    Buffer.from([terminator]),
  ]);
}

/** `FF FF FF FF getstatus [challenge] 0A` */
export function encodeQuake3StatusRequest(options: QuakeRequestOptions = {}): Buffer {
  return encodeCommand("getstatus", NEWLINE, options);
}

/** `FF FF FF FF getinfo [challenge] 0A` */
export function encodeQuake3InfoRequest(options: QuakeRequestOptions = {}): Buffer {
  return encodeCommand("getinfo", NEWLINE, options);
}

/** `FF FF FF FF status 00` (Quake 2, Kingpin, SiN, …) */
export function encodeQuake2StatusRequest(options: QuakeRequestOptions = {}): Buffer {
  return encodeCommand("status", 0x00, options);
}

const HEADERS: readonly QuakeResponseHeader[] = [
  QUAKE3_STATUS_RESPONSE,
  QUAKE3_INFO_RESPONSE,
  QUAKE2_PRINT,
];

export function decodeQuakeResponse(
  packet: Buffer,
  options: LegacyDecodeOptions = {},
): QuakeResponse {
  const encoding = options.encoding ?? "latin1";
  if (packet.length < 4)
    throw new ProtocolError("TRUNCATED", "packet ends inside the out-of-band header", {
      offset: 0,
    });
  const oob = packet.readUInt32LE(0);
  if (oob !== 0xffffffff && oob !== 0xfffffffe) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      "not an out-of-band packet (expected FF FF FF FF)",
      { offset: 0 },
    );
  }
  let offset = 4;
  let prefixByte: number | null = null;
  if (packet[offset] === 0x01 || packet[offset] === 0x02) {
    prefixByte = packet[offset]!;
    offset += 1;
  }
  const headerEnd = packet.indexOf(NEWLINE, offset);
  if (headerEnd < 0) {
    const partial = packet.subarray(offset).toString("latin1");
    if (HEADERS.some((h) => h.startsWith(partial) || partial === h)) {
      throw new ProtocolError("TRUNCATED", "packet ends inside the response header line", {
        offset,
      });
    }
    throw new ProtocolError("UNEXPECTED_RESPONSE", "unknown out-of-band response", { offset });
  }
  const headerWord = packet.subarray(offset, headerEnd).toString("latin1");
  const header = HEADERS.find((h) => h === headerWord);
  if (header === undefined) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      `unexpected response '${headerWord.slice(0, 32)}'`,
      { offset },
    );
  }
  const bodyStart = headerEnd + 1;
  const infoEnd = packet.indexOf(NEWLINE, bodyStart);
  const infoBytes = packet.subarray(bodyStart, infoEnd < 0 ? packet.length : infoEnd);
  if (infoBytes.length > 0 && infoBytes[0] !== BACKSLASH) {
    throw new ProtocolError("MALFORMED", "infostring does not start with a backslash", {
      offset: bodyStart,
    });
  }
  const info = parseInfostring(infoBytes, encoding);
  const players: QuakePlayerLine[] = [];
  if (header !== QUAKE3_INFO_RESPONSE && infoEnd >= 0) {
    let lineStart = infoEnd + 1;
    const lines = splitBytes(packet.subarray(lineStart), NEWLINE);
    lines.forEach((line, index) => {
      const isLast = index === lines.length - 1;
      // Replies may end with extra blank lines (q3-codmw2-*); a lone CR is blank too.
      if (line.length > 0 && !(line.length === 1 && line[0] === 0x0d)) {
        players.push(decodePlayerLine(line, lineStart, isLast, encoding));
      }
      lineStart += line.length + 1;
    });
  }
  return { header, prefixByte, info, players };
}

const QUOTE = 0x22;
const SPACE = 0x20;

function decodePlayerLine(
  line: Buffer,
  offset: number,
  isLast: boolean,
  encoding: LegacyDecodeOptions["encoding"],
): QuakePlayerLine {
  const open = line.indexOf(QUOTE);
  const close = line.lastIndexOf(QUOTE);
  if (open < 0 || close === open) {
    // The last line of a datagram cut short has no closing quote yet.
    const code = isLast ? "TRUNCATED" : "MALFORMED";
    throw new ProtocolError(code, "player line without a quoted name", {
      offset: offset + (open < 0 ? 0 : open),
    });
  }
  const numbers: number[] = [];
  for (const token of line.subarray(0, open).toString("latin1").split(" ")) {
    if (token === "") continue;
    if (!/^-?\d{1,15}$/.test(token)) {
      throw new ProtocolError(
        "MALFORMED",
        `player line has a non-numeric field '${token.slice(0, 16)}'`,
        { offset },
      );
    }
    numbers.push(Number.parseInt(token, 10));
  }
  let after = close + 1;
  while (line[after] === SPACE) after += 1;
  let afterEnd = line.length;
  if (line[afterEnd - 1] === 0x0d) afterEnd -= 1;
  return {
    numbers,
    name: decodeText(line.subarray(open + 1, close), encoding),
    afterName: decodeText(line.subarray(Math.min(after, afterEnd), afterEnd), encoding),
  };
}

/** The reply a server would send: used by the simulator and the round-trip tests. */
export function encodeQuakeResponse(
  response: QuakeResponse,
  encoding: LegacyDecodeOptions["encoding"] = "latin1",
): Buffer {
  const parts: Buffer[] = [OOB_HEADER];
  if (response.prefixByte !== null) parts.push(Buffer.from([response.prefixByte]));
  parts.push(Buffer.from(`${response.header}\n`, "latin1"));
  parts.push(encodeInfostring(response.info, encoding));
  if (response.header === QUAKE3_INFO_RESPONSE) return Buffer.concat(parts);
  parts.push(Buffer.from([NEWLINE]));
  for (const player of response.players) {
    const numbers = player.numbers.map((n) => `${n} `).join("");
    const after = player.afterName === "" ? "" : ` ${player.afterName}`;
    parts.push(encodeText(`${numbers}"${player.name}"${after}\n`, encoding));
  }
  return Buffer.concat(parts);
}
