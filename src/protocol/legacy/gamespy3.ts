/**
 * GameSpy v3 (QR2 with the IP-verify challenge and split replies), incl. Minecraft Query and the
 * JC2MP variant.
 *
 * Spec: docs/protocols-legacy.md, checked against the SDK's qr2.c split logic.
 *
 * | datagram bytes             | meaning                                                          |
 * |----------------------------|------------------------------------------------------------------|
 * | 09, id:4, ASCII int, 00…   | challenge answer (UT3 pads with extra 00; '' or 0 = none)         |
 * | 00, id:4, "splitnum" 00    | split reply datagram                                              |
 * | NN                         | bit 7 = last datagram, bits 0-6 = 0-based index (max 7)           |
 * | KK                         | section of the first payload item: 0 server, 1 players, 2 teams  |
 * | server: (cstr k, cstr v)…  | an empty key ends the section; the next byte is the next KK       |
 * | table: cstr field, u8 start, cstr value… 00 | values for rows start, start+1, …; empty ends |
 *
 * The server fills datagrams to 1400 bytes and re-sends a cut value in full at the start of the
 * next datagram (restating section, field and start row), so later datagrams overwrite earlier
 * ones. Empty values are indistinguishable from the field terminator (SDK limitation): such
 * cells are absent. Deviations: gs3-bf2-3 / gs3-projectrealitybf2-1 (cut and re-sent values),
 * gs3-ut3-1 (runs of 00 between fields), gs3-crysis-2 (empty sections), gs3-justcause2-* (JC2MP).
 */
import { ProtocolError } from "../errors";
import { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import { GAMESPY2_MAGIC, GAMESPY2_QUERY } from "./gamespy2";
import type { KeyValue, LegacyDecodeOptions, TextEncoding } from "./text";

export const GAMESPY3_CHALLENGE = 0x09;
export const SPLITNUM = Buffer.from("splitnum\0", "latin1");
/** The SDK never produces more than 8 datagrams (3 index bits in use). */
export const GAMESPY3_MAX_DATAGRAMS = 8;
export const GAMESPY3_DATAGRAM_BYTES = 1400;

export type Gamespy3Section = 0 | 1 | 2;

function checkRequestId(requestId: Buffer): void {
  if (requestId.length !== 4)
    throw new ProtocolError("INVALID_ARGUMENT", "GameSpy request id must be 4 bytes");
}

/** `FE FD 09 <id:4>` */
export function encodeGamespy3ChallengeRequest(requestId: Buffer): Buffer {
  checkRequestId(requestId);
  return Buffer.concat([GAMESPY2_MAGIC, Buffer.from([GAMESPY3_CHALLENGE]), requestId]);
}

export interface Gamespy3Challenge {
  requestId: Buffer;
  /** Signed 32-bit challenge, or null when the server needs none (0 or an empty string). */
  challenge: number | null;
}

export function decodeGamespy3ChallengeResponse(packet: Buffer): Gamespy3Challenge {
  const r = new PacketReader(packet);
  const type = r.u8("packet type");
  if (type !== GAMESPY3_CHALLENGE) {
    throw new ProtocolError("UNEXPECTED_RESPONSE", `challenge answer type ${type}, expected 9`, {
      offset: 0,
    });
  }
  const requestId = Buffer.from(r.bytes(4, "request id"));
  const start = r.offset;
  const text = r.cstringBytes("challenge").toString("latin1");
  if (text === "") return { requestId, challenge: null };
  if (!/^-?\d{1,20}$/.test(text))
    throw new ProtocolError("MALFORMED", `challenge '${text.slice(0, 24)}' is not a decimal`, {
      offset: start,
    });
  // Some servers print the challenge unsigned; the wire form is its 32-bit two's complement.
  const challenge = Number(BigInt.asIntN(32, BigInt(text)));
  return { requestId, challenge: challenge === 0 ? null : challenge };
}

export function encodeGamespy3ChallengeResponse(
  requestId: Buffer,
  challenge: number | null,
): Buffer {
  checkRequestId(requestId);
  return new PacketWriter()
    .u8(GAMESPY3_CHALLENGE)
    .bytes(requestId)
    .cstring(String(challenge ?? 0))
    .toBuffer();
}

/**
 * `FE FD 00 <id:4> [challenge:4 BE] FF FF FF <exFlags>`; exFlags 01 = split replies accepted,
 * 02 = JC2MP. The challenge bytes are omitted when it is null: a server that never asked for one
 * would read them as the key selectors.
 */
export function encodeGamespy3QueryRequest(
  requestId: Buffer,
  challenge: number | null,
  exFlags = 0x01,
): Buffer {
  checkRequestId(requestId);
  const w = new PacketWriter().bytes(GAMESPY2_MAGIC).u8(GAMESPY2_QUERY).bytes(requestId);
  if (challenge !== null) {
    const b = Buffer.alloc(4);
    b.writeInt32BE(challenge | 0);
    w.bytes(b);
  }
  return w.u8(0xff).u8(0xff).u8(0xff).u8(exFlags).toBuffer();
}

/** One field run of a player/team section: values for rows startIndex, startIndex+1, … */
export interface Gamespy3FieldRun {
  section: 1 | 2;
  field: string;
  startIndex: number;
  values: string[];
}

export interface Gamespy3Datagram {
  requestId: Buffer;
  /** 0-based datagram index. */
  index: number;
  isLast: boolean;
  server: KeyValue[];
  runs: Gamespy3FieldRun[];
}

export function isSplitDatagram(packet: Buffer): boolean {
  return (
    packet.length >= 14 && packet[0] === GAMESPY2_QUERY && packet.subarray(5, 14).equals(SPLITNUM)
  );
}

function toSection(byte: number, offset: number): Gamespy3Section {
  if (byte === 0 || byte === 1 || byte === 2) return byte;
  throw new ProtocolError("MALFORMED", `unknown section type ${byte}`, { offset });
}

export function decodeGamespy3Datagram(
  packet: Buffer,
  options: LegacyDecodeOptions = {},
): Gamespy3Datagram {
  const encoding = options.encoding ?? "latin1";
  const r = new PacketReader(packet);
  const type = r.u8("packet type");
  if (type !== GAMESPY2_QUERY)
    throw new ProtocolError("UNEXPECTED_RESPONSE", `GameSpy v3 reply type ${type}, expected 0`, {
      offset: 0,
    });
  const requestId = Buffer.from(r.bytes(4, "request id"));
  const marker = r.bytes(Math.min(SPLITNUM.length, r.remaining), "splitnum marker");
  if (!marker.equals(SPLITNUM)) {
    if (SPLITNUM.subarray(0, marker.length).equals(marker))
      throw new ProtocolError("TRUNCATED", "packet ends inside splitnum", { offset: 5 });
    throw new ProtocolError("UNEXPECTED_RESPONSE", "not a split reply (no splitnum marker)", {
      offset: 5,
    });
  }
  const numberByte = r.u8("datagram number");
  let section = toSection(r.u8("section type"), r.offset - 1);
  const server: KeyValue[] = [];
  const runs: Gamespy3FieldRun[] = [];
  const text = (what: string): string => r.cstringBytes(what).toString(encoding);
  while (!r.atEnd) {
    if (section === 0) {
      const key = text("server key");
      if (key === "") {
        if (r.atEnd) break;
        section = toSection(r.u8("section type"), r.offset - 1);
        continue;
      }
      if (r.atEnd) break; // a key cut at the end of a full datagram: its pair is re-sent next
      server.push({ key, value: text(`value of ${key.slice(0, 32)}`) });
      continue;
    }
    // UT3 leaves runs of 00 (empty cells of unused slots) between fields: skip them.
    while (r.peekU8() === 0) r.skip(1);
    if (r.atEnd) break;
    const next = r.peekU8()!;
    if (next === 1 || next === 2) {
      r.skip(1);
      section = next;
      continue;
    }
    const field = text("field name");
    if (r.atEnd) break; // field name cut at the end of a datagram
    const startIndex = r.u8("start row");
    const values: string[] = [];
    while (!r.atEnd) {
      const value = text(`${field.slice(0, 16)} value`);
      if (value === "") break;
      values.push(value);
    }
    runs.push({ section, field, startIndex, values });
  }
  return { requestId, index: numberByte & 0x7f, isLast: (numberByte & 0x80) !== 0, server, runs };
}

export interface Gamespy3Table {
  /** Field names (wire form, e.g. `player_`, `team_t`) that received at least one value, first-seen order. */
  fields: string[];
  /** Rows 0…max(row); a cell is absent when no non-empty value arrived for it. */
  rows: Array<Record<string, string>>;
}

export interface Gamespy3Response {
  requestId: Buffer;
  server: KeyValue[];
  players: Gamespy3Table;
  teams: Gamespy3Table;
  /** [index, isLast] of the datagrams used, in index order. */
  datagrams: Array<[number, boolean]>;
  /** False when datagrams were missing when the result was taken. */
  complete: boolean;
}

/** Collects the datagrams of one split reply; `push` returns true once all are present. */
export class Gamespy3Assembler {
  private readonly byIndex = new Map<number, Gamespy3Datagram>();
  private total: number | null = null;
  private requestId: Buffer | null;

  constructor(private readonly options: LegacyDecodeOptions & { requestId?: Buffer } = {}) {
    this.requestId = options.requestId ?? null;
  }

  push(packet: Buffer): boolean {
    const datagram = decodeGamespy3Datagram(packet, this.options);
    if (this.requestId === null) this.requestId = datagram.requestId;
    else if (!datagram.requestId.equals(this.requestId)) return this.isComplete; // another attempt's answer
    if (datagram.index >= GAMESPY3_MAX_DATAGRAMS) return this.isComplete; // never produced by the SDK
    if (!this.byIndex.has(datagram.index)) this.byIndex.set(datagram.index, datagram);
    if (datagram.isLast) this.total = datagram.index + 1;
    return this.isComplete;
  }

  get isComplete(): boolean {
    if (this.total === null) return false;
    for (let i = 0; i < this.total; i += 1) if (!this.byIndex.has(i)) return false;
    return true;
  }

  result(): Gamespy3Response {
    const ordered = [...this.byIndex.values()].sort((a, b) => a.index - b.index);
    const server = new Map<string, string>();
    const tables = {
      1: new Map<string, Map<number, string>>(),
      2: new Map<string, Map<number, string>>(),
    };
    for (const d of ordered) {
      for (const { key, value } of d.server) {
        server.delete(key); // keep the last-written order
        server.set(key, value);
      }
      for (const run of d.runs) {
        const table = tables[run.section];
        let column = table.get(run.field);
        if (column === undefined) {
          column = new Map();
          table.set(run.field, column);
        }
        run.values.forEach((value, i) => column.set(run.startIndex + i, value));
      }
    }
    return {
      requestId: this.requestId ?? Buffer.alloc(4),
      server: [...server.entries()].map(([key, value]) => ({ key, value })),
      players: buildTable(tables[1]),
      teams: buildTable(tables[2]),
      datagrams: ordered.map((d) => [d.index, d.isLast]),
      complete: this.isComplete,
    };
  }
}

function buildTable(columns: Map<string, Map<number, string>>): Gamespy3Table {
  const fields = [...columns.entries()].filter(([, c]) => c.size > 0).map(([f]) => f);
  let rowCount = 0;
  for (const f of fields)
    for (const row of columns.get(f)!.keys()) rowCount = Math.max(rowCount, row + 1);
  const rows: Array<Record<string, string>> = Array.from({ length: rowCount }, () => ({}));
  for (const f of fields) for (const [row, value] of columns.get(f)!) rows[row]![f] = value;
  return { fields, rows };
}

/** Decode a whole split reply from its datagrams (any order). */
export function decodeGamespy3Response(
  packets: readonly Buffer[],
  options: LegacyDecodeOptions = {},
): Gamespy3Response {
  const assembler = new Gamespy3Assembler(options);
  for (const packet of packets) assembler.push(packet);
  return assembler.result();
}

/**
 * Server side: split a reply into datagrams of at most `maxDatagramBytes`, SDK style: a pair or a
 * value that does not fit moves to the next datagram, which restates section, field and start row.
 */
export function encodeGamespy3Response(
  response: {
    requestId: Buffer;
    server: readonly KeyValue[];
    players: Gamespy3Table;
    teams: Gamespy3Table;
  },
  options: { maxDatagramBytes?: number; encoding?: TextEncoding } = {},
): Buffer[] {
  checkRequestId(response.requestId);
  const encoding = options.encoding ?? "latin1";
  const max = options.maxDatagramBytes ?? GAMESPY3_DATAGRAM_BYTES;
  const headerBytes = 1 + 4 + SPLITNUM.length + 2;
  const payloads: Array<{ section: Gamespy3Section; parts: Buffer[]; size: number }> = [];
  let current = { section: 0 as Gamespy3Section, parts: [] as Buffer[], size: 0 };
  payloads.push(current);
  const cstr = (s: string): Buffer => Buffer.concat([Buffer.from(s, encoding), Buffer.from([0])]);
  const fits = (bytes: number): boolean => headerBytes + current.size + bytes + 2 <= max;
  const add = (b: Buffer): void => {
    current.parts.push(b);
    current.size += b.length;
  };
  const newDatagram = (section: Gamespy3Section): void => {
    current = { section, parts: [], size: 0 };
    payloads.push(current);
  };
  for (const { key, value } of response.server) {
    const pair = Buffer.concat([cstr(key), cstr(value)]);
    if (headerBytes + pair.length + 4 > max)
      throw new ProtocolError("INVALID_ARGUMENT", `server key ${key} does not fit a datagram`);
    if (!fits(pair.length)) newDatagram(0);
    add(pair);
  }
  add(Buffer.from([0]));
  const writeTable = (section: 1 | 2, table: Gamespy3Table): void => {
    if (!fits(1)) newDatagram(section);
    else add(Buffer.from([section]));
    for (const field of table.fields) {
      const values = table.rows.map((row) => row[field] ?? "");
      if (values.length > 256)
        throw new ProtocolError(
          "INVALID_ARGUMENT",
          "GameSpy v3 start rows are one byte (256 rows at most)",
        );
      let row = 0;
      while (row < values.length) {
        if (values[row] === "") {
          row += 1; // empty cells cannot be sent (they would end the run): start a new run after them
          continue;
        }
        const head = Buffer.concat([cstr(field), Buffer.from([row])]);
        if (!fits(head.length + cstr(values[row]!).length + 1)) newDatagram(section);
        add(head);
        while (row < values.length && values[row] !== "" && fits(cstr(values[row]!).length + 1)) {
          add(cstr(values[row]!));
          row += 1;
        }
        if (row < values.length && values[row] !== "") {
          newDatagram(section); // did not fit: the next datagram restates field and start row
          continue;
        }
        add(Buffer.from([0]));
      }
    }
    add(Buffer.from([0]));
  };
  writeTable(1, response.players);
  writeTable(2, response.teams);
  if (payloads.length > GAMESPY3_MAX_DATAGRAMS)
    throw new ProtocolError("SPLIT_LIMIT", "reply needs more than 8 datagrams");
  return payloads.map((p, i) =>
    Buffer.concat([
      Buffer.from([GAMESPY2_QUERY]),
      response.requestId,
      SPLITNUM,
      Buffer.from([i | (i === payloads.length - 1 ? 0x80 : 0), p.section]),
      ...p.parts,
    ]),
  );
}

export interface Jc2mpPlayer {
  name: string;
  steamId: string;
  pingMs: number;
}

export interface Jc2mpResponse {
  requestId: Buffer;
  server: KeyValue[];
  /** The u16be player count as sent. */
  playerCountField: number;
  players: Jc2mpPlayer[];
}

/** JC2MP: one datagram, server keys, then u16be count and (cstr name, cstr steamid, u16be ping) rows. */
export function decodeJc2mpResponse(
  packet: Buffer,
  options: LegacyDecodeOptions = {},
): Jc2mpResponse {
  const encoding = options.encoding ?? "latin1";
  const r = new PacketReader(packet);
  const type = r.u8("packet type");
  if (type !== GAMESPY2_QUERY)
    throw new ProtocolError("UNEXPECTED_RESPONSE", `JC2MP reply type ${type}, expected 0`, {
      offset: 0,
    });
  const requestId = Buffer.from(r.bytes(4, "request id"));
  if (!r.bytes(SPLITNUM.length, "splitnum marker").equals(SPLITNUM)) {
    throw new ProtocolError("UNEXPECTED_RESPONSE", "not a JC2MP reply (no splitnum marker)", {
      offset: 5,
    });
  }
  r.u8("datagram number");
  const section = r.u8("section type");
  if (section !== 0)
    throw new ProtocolError("MALFORMED", `JC2MP reply starts with section ${section}`, {
      offset: r.offset - 1,
    });
  const server: KeyValue[] = [];
  for (;;) {
    const key = r.cstringBytes("server key").toString(encoding);
    if (key === "") break;
    server.push({ key, value: r.cstringBytes("server value").toString(encoding) });
  }
  const playerCountField = r.u16be("player count");
  const players: Jc2mpPlayer[] = [];
  for (let i = 0; i < playerCountField; i += 1) {
    const name = r.cstringBytes("player name").toString(encoding);
    const steamId = r.cstringBytes("steam id").toString(encoding);
    players.push({ name, steamId, pingMs: r.u16be("ping") });
  }
  return { requestId, server, playerCountField, players };
}

export function encodeJc2mpResponse(
  response: Jc2mpResponse,
  encoding: TextEncoding = "latin1",
): Buffer {
  checkRequestId(response.requestId);
  const w = new PacketWriter()
    .u8(GAMESPY2_QUERY)
    .bytes(response.requestId)
    .bytes(SPLITNUM)
    .u8(0)
    .u8(0);
  for (const { key, value } of response.server) w.cstring(key, encoding).cstring(value, encoding);
  w.u8(0).u16be(response.players.length);
  for (const p of response.players)
    w.cstring(p.name, encoding).cstring(p.steamId, encoding).u16be(p.pingMs);
  return w.toBuffer();
}
