/**
 * GameSpy v2 (QR2, single datagram): `FE FD 00 <id> <server> <players> <teams>`.
 *
 * Spec: docs/protocols-legacy.md, checked against the SDK's qr2.c.
 *
 * | reply bytes                       | meaning                                                 |
 * |-----------------------------------|---------------------------------------------------------|
 * | 00, 4-byte id echo                | reject datagrams whose id is not ours                   |
 * | (cstr key, cstr value)…, 00       | server section, if requested                            |
 * | u16be count, cstr field…, 00, rows| player section, if requested: count × one cstr per field |
 * | u16be count, cstr field…, 00, rows| team section, if requested                              |
 *
 * The counts are 16-bit big-endian (most clients read "00 + u8", the same below 256 rows).
 * Rows are read by count, never by scanning, since an empty value is a bare 00.
 * Deviations: gs2-arma-* (empty team_ values, zero rows), gs2-halo-* (control bytes in names,
 * team rows), America's Army (count bytes missing: a first count byte >= 0x20 is text).
 */
import { ProtocolError } from "../errors";
import { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import type { KeyValue, LegacyDecodeOptions, TextEncoding } from "./text";

export const GAMESPY2_MAGIC = Buffer.from([0xfe, 0xfd]);
export const GAMESPY2_QUERY = 0x00;

export interface Gamespy2Sections {
  server: boolean;
  players: boolean;
  teams: boolean;
}

export const ALL_SECTIONS: Gamespy2Sections = { server: true, players: true, teams: true };

function checkRequestId(requestId: Buffer): void {
  if (requestId.length !== 4)
    throw new ProtocolError("INVALID_ARGUMENT", "GameSpy request id must be 4 bytes");
}

/** `FE FD 00 <id:4> SS PP TT [EE]`; each selector is FF (all keys) or 00 (none). */
export function encodeGamespy2Request(
  requestId: Buffer,
  sections: Gamespy2Sections = ALL_SECTIONS,
  exFlags?: number,
): Buffer {
  checkRequestId(requestId);
  const w = new PacketWriter().bytes(GAMESPY2_MAGIC).u8(GAMESPY2_QUERY).bytes(requestId);
  w.u8(sections.server ? 0xff : 0)
    .u8(sections.players ? 0xff : 0)
    .u8(sections.teams ? 0xff : 0);
  if (exFlags !== undefined) w.u8(exFlags);
  return w.toBuffer();
}

export interface Gamespy2Table {
  /** The u16be row count as sent, or null when the server omitted it (America's Army). */
  countField: number | null;
  /** Field names as sent, trailing `_` / `_t` included. */
  fields: string[];
  /** One value per field per row, in field order. */
  rows: string[][];
}

export interface Gamespy2Response {
  requestId: Buffer;
  /** Server key/values in wire order, or null when the section was not requested or not sent. */
  server: KeyValue[] | null;
  players: Gamespy2Table | null;
  teams: Gamespy2Table | null;
  /** Bytes left after the requested sections (0 for every real capture). */
  trailingBytes: number;
}

function readText(r: PacketReader, encoding: TextEncoding, what: string): string {
  return r.cstringBytes(what).toString(encoding);
}

export function decodeServerSection(r: PacketReader, encoding: TextEncoding): KeyValue[] {
  const pairs: KeyValue[] = [];
  for (;;) {
    const key = readText(r, encoding, "server key");
    if (key === "") return pairs;
    pairs.push({ key, value: readText(r, encoding, `value of ${key.slice(0, 32)}`) });
  }
}

function decodeTable(r: PacketReader, encoding: TextEncoding, what: string): Gamespy2Table {
  let countField: number | null;
  const first = r.peekU8();
  if (first !== undefined && first >= 0x20) {
    countField = null; // America's Army: no count, the field list starts at once
  } else {
    countField = r.u16be(`${what} count`);
  }
  const fields: string[] = [];
  for (;;) {
    const field = readText(r, encoding, `${what} field name`);
    if (field === "") break;
    fields.push(field);
  }
  const rows: string[][] = [];
  const readRow = (): void => {
    rows.push(fields.map((f) => readText(r, encoding, `${what} value ${f.slice(0, 16)}`)));
  };
  if (countField !== null) {
    if (fields.length === 0 && countField > 0) {
      throw new ProtocolError("MALFORMED", `${what} section has ${countField} rows but no fields`, {
        offset: r.offset,
      });
    }
    for (let i = 0; i < countField; i += 1) readRow();
  } else {
    while (!r.atEnd && r.peekU8() !== 0 && fields.length > 0) readRow();
  }
  return { countField, fields, rows };
}

/**
 * Decode one reply. `sections` must say what the request asked for: the reply does not. A
 * requested section that is missing at the end of the datagram is null (some games answer only
 * the server section), not an error.
 */
export function decodeGamespy2Response(
  packet: Buffer,
  sections: Gamespy2Sections = ALL_SECTIONS,
  options: LegacyDecodeOptions & { requestId?: Buffer } = {},
): Gamespy2Response {
  const encoding = options.encoding ?? "latin1";
  const r = new PacketReader(packet);
  const type = r.u8("packet type");
  if (type !== GAMESPY2_QUERY)
    throw new ProtocolError("UNEXPECTED_RESPONSE", `GameSpy v2 reply type ${type}, expected 0`, {
      offset: 0,
    });
  const requestId = Buffer.from(r.bytes(4, "request id"));
  if (options.requestId !== undefined && !requestId.equals(options.requestId)) {
    throw new ProtocolError("UNEXPECTED_RESPONSE", "GameSpy v2 reply for another request id", {
      offset: 1,
    });
  }
  if (packet.subarray(5, 14).equals(Buffer.from("splitnum\0", "latin1"))) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      "split (GameSpy v3) reply where GameSpy v2 was expected",
      { offset: 5 },
    );
  }
  const server = sections.server && !r.atEnd ? decodeServerSection(r, encoding) : null;
  const players = sections.players && !r.atEnd ? decodeTable(r, encoding, "player") : null;
  const teams = sections.teams && !r.atEnd ? decodeTable(r, encoding, "team") : null;
  return { requestId, server, players, teams, trailingBytes: r.remaining };
}

/** Rows as objects keyed by the wire field names (`player_`, `score_`, …). */
export function tableToObjects(table: Gamespy2Table): Array<Record<string, string>> {
  return table.rows.map((row) => Object.fromEntries(table.fields.map((f, i) => [f, row[i] ?? ""])));
}

function writeTable(w: PacketWriter, table: Gamespy2Table, encoding: TextEncoding): void {
  if (table.countField !== null) w.u16be(table.countField);
  for (const f of table.fields) w.cstring(f, encoding);
  w.u8(0);
  for (const row of table.rows) for (const value of row) w.cstring(value, encoding);
}

/** Server side (simulator, round-trip tests). */
export function encodeGamespy2Response(
  response: Gamespy2Response,
  encoding: TextEncoding = "latin1",
): Buffer {
  checkRequestId(response.requestId);
  const w = new PacketWriter().u8(GAMESPY2_QUERY).bytes(response.requestId);
  if (response.server !== null) {
    for (const { key, value } of response.server) w.cstring(key, encoding).cstring(value, encoding);
    w.u8(0);
  }
  if (response.players !== null) writeTable(w, response.players, encoding);
  if (response.teams !== null) writeTable(w, response.teams, encoding);
  return w.toBuffer();
}
