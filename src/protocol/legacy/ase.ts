/**
 * All-Seeing Eye (UdpSoft): request `s`, reply `EYE1` + length-prefixed strings.
 *
 * Spec: docs/protocols-legacy.md; GameDig's and qstat's ASE readers. Queried at game port + 123 (see quirks.ts).
 *
 * | bytes            | meaning                                                               |
 * |------------------|-----------------------------------------------------------------------|
 * | "EYE1"           | full status reply                                                     |
 * | 9 × pstr         | gamename, port, hostname, gametype, map, version, password, numplayers, maxplayers |
 * | (pstr k, pstr v)…| rules; an empty key (the single byte 01) ends them                    |
 * | players…         | u8 flags, then a pstr per set bit: 01 name, 02 team, 04 skin, 08 score, 10 ping, 20 time |
 *
 * pstr = one length byte that COUNTS ITSELF, then len-1 bytes; a length byte 00 is invalid and
 * read as an empty string that advances one byte. Deviation: ase-mta-1 (flags 3F with
 * empty team/skin/time, several KB in one datagram, UTF-8 text).
 */
import { ProtocolError } from "../errors";
import { PacketReader } from "../wire/packet-reader";
import type { KeyValue, LegacyDecodeOptions, TextEncoding } from "./text";

export const ASE_REQUEST = Buffer.from("s", "latin1");
export const ASE_MAGIC = Buffer.from("EYE1", "latin1");

export function encodeAseRequest(): Buffer {
  return Buffer.from(ASE_REQUEST);
}

export const ASE_PLAYER_FIELDS = ["name", "team", "skin", "score", "ping", "time"] as const;
export type AsePlayerField = (typeof ASE_PLAYER_FIELDS)[number];

export interface AsePlayer {
  flags: number;
  /** Fields present per the flags, raw text. */
  name?: string;
  team?: string;
  skin?: string;
  score?: string;
  ping?: string;
  time?: string;
}

export interface AseResponse {
  gameName: string;
  /** Game port as the server reports it (decimal text). */
  gamePort: string;
  hostname: string;
  gameType: string;
  map: string;
  version: string;
  password: string;
  numPlayers: string;
  maxPlayers: string;
  rules: KeyValue[];
  players: AsePlayer[];
}

function readPstr(r: PacketReader, encoding: TextEncoding, what: string): string {
  const length = r.u8(`${what} length`);
  if (length <= 1) return "";
  return r.bytes(length - 1, what).toString(encoding);
}

export function decodeAseResponse(packet: Buffer, options: LegacyDecodeOptions = {}): AseResponse {
  const encoding = options.encoding ?? "latin1";
  const r = new PacketReader(packet);
  const magic = r.bytes(Math.min(4, r.remaining), "EYE1");
  if (!magic.equals(ASE_MAGIC)) {
    if (ASE_MAGIC.subarray(0, magic.length).equals(magic))
      throw new ProtocolError("TRUNCATED", "packet ends inside EYE1", { offset: 0 });
    throw new ProtocolError("UNEXPECTED_RESPONSE", "not an All-Seeing-Eye reply (expected EYE1)", {
      offset: 0,
    });
  }
  const s = (what: string): string => readPstr(r, encoding, what);
  const head = {
    gameName: s("game name"),
    gamePort: s("port"),
    hostname: s("hostname"),
    gameType: s("game type"),
    map: s("map"),
    version: s("version"),
    password: s("password"),
    numPlayers: s("player count"),
    maxPlayers: s("max players"),
  };
  const rules: KeyValue[] = [];
  for (;;) {
    const key = s("rule name");
    if (key === "") break;
    rules.push({ key, value: s(`value of ${key.slice(0, 32)}`) });
  }
  const players: AsePlayer[] = [];
  while (!r.atEnd) {
    const flags = r.u8("player flags");
    const player: AsePlayer = { flags };
    ASE_PLAYER_FIELDS.forEach((field, bit) => {
      if (flags & (1 << bit)) player[field] = s(`player ${field}`);
    });
    players.push(player);
  }
  return { ...head, rules, players };
}

function pstr(value: string, encoding: TextEncoding): Buffer {
  const bytes = Buffer.from(value, encoding);
  if (bytes.length > 254)
    throw new ProtocolError("INVALID_ARGUMENT", "ASE strings are at most 254 bytes");
  return Buffer.concat([Buffer.from([bytes.length + 1]), bytes]);
}

/** Server side (simulator, round-trip tests). A player's flags are derived from its fields. */
export function encodeAseResponse(
  response: AseResponse,
  encoding: TextEncoding = "latin1",
): Buffer {
  const s = (v: string): Buffer => pstr(v, encoding);
  const parts: Buffer[] = [ASE_MAGIC];
  for (const v of [
    response.gameName,
    response.gamePort,
    response.hostname,
    response.gameType,
    response.map,
    response.version,
    response.password,
    response.numPlayers,
    response.maxPlayers,
  ]) {
    parts.push(s(v));
  }
  for (const { key, value } of response.rules) {
    if (key === "")
      throw new ProtocolError(
        "INVALID_ARGUMENT",
        "an ASE rule name cannot be empty (it ends the rules)",
      );
    parts.push(s(key), s(value));
  }
  parts.push(Buffer.from([1]));
  for (const p of response.players) {
    let flags = 0;
    const fields: Buffer[] = [];
    ASE_PLAYER_FIELDS.forEach((field, bit) => {
      const value = p[field];
      if (value !== undefined) {
        flags |= 1 << bit;
        fields.push(s(value));
      }
    });
    parts.push(Buffer.from([flags]), ...fields);
  }
  return Buffer.concat(parts);
}
