/**
 * Half-Life (WON-era) string queries: `details`, `info`, `players`, `rules`, `infostring`, `ping`,
 * and the GoldSrc split datagrams their answers may come in.
 *
 * Spec: docs/protocols-legacy.md; HL SDK "Server Protocol.txt"; ReHLDS.
 *
 * | reply                        | layout after FF FF FF FF                                      |
 * |------------------------------|---------------------------------------------------------------|
 * | 'm' S2A_INFO_DETAILED        | address, hostname, map, gamedir, description (cstr), u8 players, u8 max, u8 protocol, u8 type, u8 os, u8 password, u8 isMod [mod block], [u8 secure], [u8 bots] |
 * | 'C' S2A_INFO                 | as 'm' up to protocol                                          |
 * | 'D' S2A_PLAYERS              | u8 count, then { u8 index, cstr name, i32 frags, f32 seconds } until the end |
 * | 'E' S2A_RULES                | u16 count, then { cstr name, cstr value } until the end       |
 * | 'I' (Steam-era GoldSrc)      | Source-style info, answered beside 'm' by Steam-era servers     |
 * | 'infostringresponse' 00      | \key\value… 00                                                 |
 * | 'j'                          | ping answer                                                    |
 * | FE FF FF FF, i32 id, u8 (index << 4 | total), payload | GoldSrc split; part 0 starts FF FF FF FF |
 *
 * Counts are not trusted for termination (entries are read until the buffer ends).
 * Deviations: hl-cs15-1 (WON 'm' with mod block, split 'E'), hl-cs16-* / hl-hl1-1 ('m' and 'I'
 * both answered, 'D' twice), hl-cs16-3 (a '\r' inside the version string).
 */
import { ProtocolError } from "../errors";
import { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import { MAX_GOLDSRC_FRAGMENTS } from "../defaults";
import { OOB_HEADER } from "./quake3";
import { parseInfostring } from "./text";
import type { KeyValue, LegacyDecodeOptions, TextEncoding } from "./text";

export const GOLDSRC_SPLIT_HEADER = Buffer.from([0xfe, 0xff, 0xff, 0xff]);
export const S2A_INFO = 0x43; // 'C'
export const S2A_INFO_DETAILED = 0x6d; // 'm'
export const S2A_INFO_SRC = 0x49; // 'I'
export const S2A_PLAYERS = 0x44; // 'D'
export const S2A_RULES = 0x45; // 'E'
export const A2A_ACK = 0x6a; // 'j'
export const INFOSTRING_RESPONSE = "infostringresponse";

export type HalfLifeCommand = "ping" | "info" | "details" | "players" | "rules" | "infostring";

/** `FF FF FF FF <command> 00` */
export function encodeHalfLifeRequest(command: HalfLifeCommand): Buffer {
  return Buffer.concat([OOB_HEADER, Buffer.from(command, "latin1"), Buffer.from([0])]);
}

export interface HalfLifeModInfo {
  infoUrl: string;
  downloadUrl: string;
  /** The reserved byte (always 0 on real servers). */
  reserved: number;
  version: number;
  sizeBytes: number;
  serverSideOnly: boolean;
  customClientDll: boolean;
}

export interface HalfLifeInfo {
  type: "C" | "m";
  /** "ip:port" as the server sees itself (often 127.0.0.1 or LOOPBACK): never connect to it. */
  address: string;
  hostname: string;
  map: string;
  gamedir: string;
  description: string;
  numPlayers: number;
  maxPlayers: number;
  protocol: number;
  /** 'd' dedicated, 'l' listen, 'p' HLTV; null for 'C'. */
  serverType: string | null;
  /** 'w' or 'l'; null for 'C'. */
  os: string | null;
  passwordProtected: boolean | null;
  mod: HalfLifeModInfo | null;
  /** Absent on very old servers. */
  secure: boolean | null;
  bots: number | null;
  trailing: Buffer;
}

export interface HalfLifeSourceInfo {
  type: "I";
  protocol: number;
  hostname: string;
  map: string;
  gamedir: string;
  description: string;
  appId: number;
  numPlayers: number;
  maxPlayers: number;
  bots: number;
  serverType: string;
  os: string;
  passwordProtected: boolean;
  secure: boolean;
  version: string;
  edf: number | null;
  gamePort: number | null;
  steamId: string | null;
  sourceTvPort: number | null;
  sourceTvName: string | null;
  keywords: string | null;
  gameId: string | null;
  trailing: Buffer;
}

export interface HalfLifePlayer {
  index: number;
  name: string;
  score: number;
  durationSeconds: number;
}

export interface HalfLifePlayers {
  type: "D";
  countField: number;
  players: HalfLifePlayer[];
}

export interface HalfLifeRules {
  type: "E";
  countField: number;
  rules: KeyValue[];
}

export interface HalfLifeInfostring {
  type: "infostring";
  pairs: KeyValue[];
}

export interface HalfLifePing {
  type: "j";
}

export type HalfLifeMessage =
  | HalfLifeInfo
  | HalfLifeSourceInfo
  | HalfLifePlayers
  | HalfLifeRules
  | HalfLifeInfostring
  | HalfLifePing;

/** Decode one complete (reassembled) reply that starts with FF FF FF FF. */
export function decodeHalfLifeMessage(
  packet: Buffer,
  options: LegacyDecodeOptions = {},
): HalfLifeMessage {
  const encoding = options.encoding ?? "latin1";
  const r = new PacketReader(packet);
  if (!r.bytes(4, "header").equals(OOB_HEADER)) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      "not a connectionless reply (expected FF FF FF FF)",
      { offset: 0 },
    );
  }
  const text = (what: string): string => r.cstringBytes(what).toString(encoding);
  const typeOffset = r.offset;
  const type = r.u8("reply type");
  switch (type) {
    case S2A_INFO:
    case S2A_INFO_DETAILED:
      return decodeInfo(r, type === S2A_INFO ? "C" : "m", text);
    case S2A_INFO_SRC:
      return decodeSourceInfo(r, text);
    case S2A_PLAYERS: {
      const countField = r.u8("player count");
      const players: HalfLifePlayer[] = [];
      while (!r.atEnd) {
        const index = r.u8("player index");
        const name = text("player name");
        players.push({
          index,
          name,
          score: r.i32le("score"),
          durationSeconds: r.f32le("duration"),
        });
      }
      return { type: "D", countField, players };
    }
    case S2A_RULES: {
      const countField = r.u16le("rule count");
      const rules: KeyValue[] = [];
      while (!r.atEnd) {
        const key = text("rule name");
        rules.push({ key, value: text(`value of ${key.slice(0, 32)}`) });
      }
      return { type: "E", countField, rules };
    }
    case A2A_ACK:
      return { type: "j" };
    default: {
      const word = packet
        .subarray(typeOffset, typeOffset + INFOSTRING_RESPONSE.length)
        .toString("latin1");
      if (word === INFOSTRING_RESPONSE) {
        r.skip(INFOSTRING_RESPONSE.length - 1);
        if (r.peekU8() === 0) r.skip(1);
        // The infostring ends with 00; some tools also see 00 separators: accept both.
        const body = r.rest();
        const end = body.length > 0 && body[body.length - 1] === 0 ? body.length - 1 : body.length;
        const normalised = Buffer.from(body.subarray(0, end)).map((b) => (b === 0 ? 0x5c : b));
        return { type: "infostring", pairs: parseInfostring(Buffer.from(normalised), encoding) };
      }
      throw new ProtocolError(
        "UNEXPECTED_RESPONSE",
        `unknown Half-Life reply type 0x${type.toString(16)}`,
        { offset: typeOffset },
      );
    }
  }
}

function decodeInfo(
  r: PacketReader,
  type: "C" | "m",
  text: (what: string) => string,
): HalfLifeInfo {
  const address = text("address");
  const hostname = text("hostname");
  const map = text("map");
  const gamedir = text("gamedir");
  const description = text("description");
  const numPlayers = r.u8("player count");
  const maxPlayers = r.u8("max players");
  const protocol = r.u8("protocol");
  const info: HalfLifeInfo = {
    type,
    address,
    hostname,
    map,
    gamedir,
    description,
    numPlayers,
    maxPlayers,
    protocol,
    serverType: null,
    os: null,
    passwordProtected: null,
    mod: null,
    secure: null,
    bots: null,
    trailing: Buffer.alloc(0),
  };
  if (type === "C") {
    info.trailing = Buffer.from(r.rest());
    return info;
  }
  info.serverType = String.fromCharCode(r.u8("server type"));
  info.os = String.fromCharCode(r.u8("os"));
  info.passwordProtected = r.u8("password") !== 0;
  const isMod = r.u8("is mod") !== 0;
  if (isMod) {
    info.mod = {
      infoUrl: text("mod info url"),
      downloadUrl: text("mod download url"),
      reserved: r.u8("mod reserved"),
      version: r.i32le("mod version"),
      sizeBytes: r.i32le("mod size"),
      serverSideOnly: r.u8("server-side only") !== 0,
      customClientDll: r.u8("custom client dll") !== 0,
    };
  }
  // secure and bots are absent on very old servers.
  if (!r.atEnd) info.secure = r.u8("secure") !== 0;
  if (!r.atEnd) info.bots = r.u8("bots");
  info.trailing = Buffer.from(r.rest());
  return info;
}

function decodeSourceInfo(r: PacketReader, text: (what: string) => string): HalfLifeSourceInfo {
  const protocol = r.u8("protocol");
  const hostname = text("hostname");
  const map = text("map");
  const gamedir = text("gamedir");
  const description = text("description");
  const appId = r.u16le("app id");
  const numPlayers = r.u8("player count");
  const maxPlayers = r.u8("max players");
  const bots = r.u8("bots");
  const serverType = String.fromCharCode(r.u8("server type"));
  const os = String.fromCharCode(r.u8("os"));
  const passwordProtected = r.u8("password") !== 0;
  const secure = r.u8("secure") !== 0;
  const version = text("version");
  const edf = r.atEnd ? null : r.u8("extra data flag"); // EDF is absent on old servers
  const flags = edf ?? 0;
  const gamePort = flags & 0x80 ? r.u16le("game port") : null;
  const steamId = flags & 0x10 ? r.u64leDecimal("steam id") : null;
  const sourceTvPort = flags & 0x40 ? r.u16le("SourceTV port") : null;
  const sourceTvName = flags & 0x40 ? text("SourceTV name") : null;
  const keywords = flags & 0x20 ? text("keywords") : null;
  const gameId = flags & 0x01 ? r.u64leDecimal("game id") : null;
  return {
    type: "I",
    protocol,
    hostname,
    map,
    gamedir,
    description,
    appId,
    numPlayers,
    maxPlayers,
    bots,
    serverType,
    os,
    passwordProtected,
    secure,
    version,
    edf,
    gamePort,
    steamId,
    sourceTvPort,
    sourceTvName,
    keywords,
    gameId,
    trailing: Buffer.from(r.rest()),
  };
}

/** Collects GoldSrc split datagrams (`FE FF FF FF`, id, index<<4 | total) per reply id. */
export class GoldSrcSplitAssembler {
  private readonly replies = new Map<number, { total: number; parts: Map<number, Buffer> }>();

  /** Returns the reassembled reply (starting FF FF FF FF) once all its parts are in, else null. */
  push(packet: Buffer): Buffer | null {
    const r = new PacketReader(packet);
    if (!r.bytes(4, "split header").equals(GOLDSRC_SPLIT_HEADER)) {
      throw new ProtocolError(
        "UNEXPECTED_RESPONSE",
        "not a GoldSrc split datagram (expected FE FF FF FF)",
        { offset: 0 },
      );
    }
    const id = r.i32le("split id");
    const numbers = r.u8("part number");
    const index = numbers >> 4;
    const total = numbers & 0x0f;
    if (total === 0 || index >= total) {
      throw new ProtocolError("MALFORMED", `split part ${index} of ${total}`, { offset: 8 });
    }
    if (total > MAX_GOLDSRC_FRAGMENTS)
      throw new ProtocolError("SPLIT_LIMIT", `split reply of ${total} parts`, { offset: 8 });
    let reply = this.replies.get(id);
    if (reply === undefined) {
      if (this.replies.size >= 16)
        throw new ProtocolError("SPLIT_LIMIT", "too many split replies in flight", { offset: 4 });
      reply = { total, parts: new Map() };
      this.replies.set(id, reply);
    } else if (reply.total !== total) {
      throw new ProtocolError(
        "MALFORMED",
        `split part count changed from ${reply.total} to ${total}`,
        { offset: 8 },
      );
    }
    if (!reply.parts.has(index)) reply.parts.set(index, Buffer.from(r.rest()));
    if (reply.parts.size < reply.total) return null;
    this.replies.delete(id);
    const payload = Buffer.concat(
      [...reply.parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => p),
    );
    return payload;
  }
}

/** Decode every reply found in a list of datagrams (split parts reassembled), in completion order. */
export function decodeHalfLifeDatagrams(
  packets: readonly Buffer[],
  options: LegacyDecodeOptions = {},
): HalfLifeMessage[] {
  const assembler = new GoldSrcSplitAssembler();
  const messages: HalfLifeMessage[] = [];
  for (const packet of packets) {
    if (packet.length >= 4 && packet.subarray(0, 4).equals(GOLDSRC_SPLIT_HEADER)) {
      const whole = assembler.push(packet);
      if (whole !== null) messages.push(decodeHalfLifeMessage(whole, options));
    } else {
      messages.push(decodeHalfLifeMessage(packet, options));
    }
  }
  return messages;
}

/** Server side: one reply datagram (simulator, round-trip tests). 'I' is left to the A2S codecs. */
export function encodeHalfLifeMessage(
  message: Exclude<HalfLifeMessage, HalfLifeSourceInfo>,
  encoding: TextEncoding = "latin1",
): Buffer {
  const w = new PacketWriter().bytes(OOB_HEADER);
  const s = (value: string): PacketWriter => w.cstring(value, encoding);
  switch (message.type) {
    case "C":
    case "m": {
      w.u8(message.type === "C" ? S2A_INFO : S2A_INFO_DETAILED);
      s(message.address);
      s(message.hostname);
      s(message.map);
      s(message.gamedir);
      s(message.description);
      w.u8(message.numPlayers).u8(message.maxPlayers).u8(message.protocol);
      if (message.type === "m") {
        w.u8((message.serverType ?? "d").charCodeAt(0))
          .u8((message.os ?? "l").charCodeAt(0))
          .u8(message.passwordProtected === true ? 1 : 0);
        w.u8(message.mod === null ? 0 : 1);
        if (message.mod !== null) {
          const m = message.mod;
          s(m.infoUrl);
          s(m.downloadUrl);
          w.u8(m.reserved)
            .i32le(m.version)
            .i32le(m.sizeBytes)
            .u8(m.serverSideOnly ? 1 : 0)
            .u8(m.customClientDll ? 1 : 0);
        }
        if (message.secure !== null) w.u8(message.secure ? 1 : 0);
        if (message.secure !== null && message.bots !== null) w.u8(message.bots);
      }
      w.bytes(message.trailing);
      break;
    }
    case "D":
      w.u8(S2A_PLAYERS).u8(message.countField);
      for (const p of message.players) {
        w.u8(p.index);
        s(p.name);
        w.i32le(p.score).f32le(p.durationSeconds);
      }
      break;
    case "E":
      w.u8(S2A_RULES).u16le(message.countField);
      for (const { key, value } of message.rules) {
        s(key);
        s(value);
      }
      break;
    case "infostring":
      w.cstring(INFOSTRING_RESPONSE, "latin1");
      s(message.pairs.map(({ key, value }) => `\\${key}\\${value}`).join(""));
      break;
    case "j":
      w.u8(A2A_ACK);
      break;
  }
  return w.toBuffer();
}

/** Split a reply into GoldSrc split datagrams of at most `maxPayloadBytes` payload each. */
export function encodeGoldSrcSplit(reply: Buffer, id: number, maxPayloadBytes = 1391): Buffer[] {
  const total = Math.max(1, Math.ceil(reply.length / maxPayloadBytes));
  if (total > MAX_GOLDSRC_FRAGMENTS)
    throw new ProtocolError("SPLIT_LIMIT", `reply needs ${total} parts`);
  return Array.from({ length: total }, (_, i) => {
    const header = Buffer.alloc(9);
    GOLDSRC_SPLIT_HEADER.copy(header);
    header.writeInt32LE(id | 0, 4);
    header.writeUInt8((i << 4) | total, 8);
    return Buffer.concat([header, reply.subarray(i * maxPayloadBytes, (i + 1) * maxPayloadBytes)]);
  });
}
