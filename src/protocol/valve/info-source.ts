/**
 * Source A2S_INFO reply (S2A_INFO_SRC, 0x49). Spec: Valve's "Server Queries" page; docs/protocols.md "A2S_INFO".
 *
 * | field        | type    | notes                                                        |
 * |--------------|---------|--------------------------------------------------------------|
 * | header, type | i32, u8 | FF FF FF FF 49                                               |
 * | protocol     | u8      |                                                              |
 * | name, map, folder, game | cstring x4 | UTF-8; exact bytes kept as <field>Hex if invalid |
 * | appId        | u16     | 0 for many non-Valve games (real id in EDF gameId)           |
 * | players, maxPlayers, bots | u8 x3 |                                                  |
 * | serverType, environment | char x2 | raw: d/l/p, l/w/m/o (0x00 from Rag Doll Kung Fu)  |
 * | visibility, vac | u8 x2 | VAC must be 0 or 1 (see deviations)                           |
 * | mode, witnesses, duration | u8 x3 | The Ship only (quirks.ts)                          |
 * | version      | cstring |                                                              |
 * | edf          | u8      | optional; then 0x80 port u16, 0x10 steamId u64, 0x40 tvPort u16 + tvName, 0x20 keywords, 0x01 gameId u64 |
 *
 * Deviations: a DayZ server omits the VAC byte (a2srs-malformed-info-missing-vac-byte): the
 * version's first character lands in VAC. A VAC byte other than 0/1 is rejected as MALFORMED rather
 * than decoded into a silently wrong version string.
 */
import { ProtocolError } from "../errors";
import type { PacketReader } from "../wire/packet-reader";
import type { PacketWriter } from "../wire/packet-writer";
import {
  EDF_GAME_ID,
  EDF_KEYWORDS,
  EDF_PORT,
  EDF_SOURCE_TV,
  EDF_STEAM_ID,
  S2A_INFO_SRC,
} from "./constants";
import { quirksFor } from "./quirks";
import { byteToChar, charToByte, startSinglePacket, writeText } from "./single-packet";

/** The Ship's extra A2S_INFO fields (app id 2400). */
export interface TheShipInfo {
  /** Game mode: 0 hunt, 1 elimination, 2 duel, 3 deathmatch, 4 VIP team, 5 team elimination. */
  mode: number;
  /** Witnesses needed to arrest a player. */
  witnesses: number;
  /** Seconds before a player is arrested while witnessed. */
  duration: number;
}

/** A decoded Source A2S_INFO reply. Field names follow the gsindex JSON contract. */
export interface SourceInfo {
  type: "source";
  /** Network protocol version byte. */
  protocol: number;
  name: string;
  /** Exact bytes (hex) of `name`, present only when they are not valid UTF-8; same for the other *Hex fields. */
  nameHex?: string;
  map: string;
  mapHex?: string;
  /** Game directory, e.g. "cstrike". */
  folder: string;
  folderHex?: string;
  /** Game description. */
  game: string;
  gameHex?: string;
  /** Steam app id from the fixed 16-bit field (0 for many games; see gameId). */
  appId: number;
  players: number;
  maxPlayers: number;
  bots: number;
  /** Raw character: 'd' dedicated, 'l' listen, 'p' SourceTV proxy (others seen: '\u0000'). */
  serverType: string;
  /** Raw character: 'l' Linux, 'w' Windows, 'm' or 'o' macOS. */
  environment: string;
  /** 1 when a password is required. */
  visibility: number;
  /** 1 when VAC secured. */
  vac: number;
  /** The Ship only. */
  theShip?: TheShipInfo;
  version: string;
  versionHex?: string;
  /** Extra Data Flag byte; absent when the packet ends after `version`. */
  edf?: number;
  /** Game port (EDF 0x80). */
  port?: number;
  /** Server SteamID as a decimal string (EDF 0x10). */
  steamId?: string;
  /** Comma-separated tags (EDF 0x20). */
  keywords?: string;
  keywordsHex?: string;
  /** 64-bit game id as a decimal string (EDF 0x01); its low 24 bits are the app id. */
  gameId?: string;
  /** SourceTV port (EDF 0x40). */
  tvPort?: number;
  tvName?: string;
  tvNameHex?: string;
}

/** Decodes the body after FF FF FF FF 49; `reader` stands on the protocol byte. */
export function decodeSourceInfoBody(reader: PacketReader): SourceInfo {
  const protocol = reader.u8("protocol");
  const name = reader.cstringExact("name");
  const map = reader.cstringExact("map");
  const folder = reader.cstringExact("folder");
  const game = reader.cstringExact("game");
  const info: SourceInfo = {
    type: "source",
    protocol,
    name: name.value,
    map: map.value,
    folder: folder.value,
    game: game.value,
    appId: 0,
    players: 0,
    maxPlayers: 0,
    bots: 0,
    serverType: "",
    environment: "",
    visibility: 0,
    vac: 0,
    version: "",
  };
  if (name.hex !== undefined) info.nameHex = name.hex;
  if (map.hex !== undefined) info.mapHex = map.hex;
  if (folder.hex !== undefined) info.folderHex = folder.hex;
  if (game.hex !== undefined) info.gameHex = game.hex;
  info.appId = reader.u16le("app id");
  info.players = reader.u8("players");
  info.maxPlayers = reader.u8("max players");
  info.bots = reader.u8("bots");
  info.serverType = byteToChar(reader.u8("server type"));
  info.environment = byteToChar(reader.u8("environment"));
  info.visibility = reader.u8("visibility");
  const vacOffset = reader.offset;
  info.vac = reader.u8("VAC");
  if (info.vac > 1) {
    throw new ProtocolError(
      "MALFORMED",
      `VAC byte is 0x${info.vac.toString(16)}, not 0 or 1 (the server likely omitted it; the version string would start one byte early)`,
      { offset: vacOffset },
    );
  }
  if (quirksFor(info.appId).infoHasTheShipFields) {
    info.theShip = {
      mode: reader.u8("The Ship mode"),
      witnesses: reader.u8("The Ship witnesses"),
      duration: reader.u8("The Ship duration"),
    };
  }
  const version = reader.cstringExact("version");
  info.version = version.value;
  if (version.hex !== undefined) info.versionHex = version.hex;
  if (reader.atEnd) return info;
  const edf = reader.u8("extra data flag");
  info.edf = edf;
  if (edf & EDF_PORT) info.port = reader.u16le("game port");
  if (edf & EDF_STEAM_ID) info.steamId = reader.u64leDecimal("steam id");
  if (edf & EDF_SOURCE_TV) {
    info.tvPort = reader.u16le("SourceTV port");
    const tvName = reader.cstringExact("SourceTV name");
    info.tvName = tvName.value;
    if (tvName.hex !== undefined) info.tvNameHex = tvName.hex;
  }
  if (edf & EDF_KEYWORDS) {
    const keywords = reader.cstringExact("keywords");
    info.keywords = keywords.value;
    if (keywords.hex !== undefined) info.keywordsHex = keywords.hex;
  }
  if (edf & EDF_GAME_ID) info.gameId = reader.u64leDecimal("game id");
  return info;
}

function requireField<T>(value: T | undefined, what: string): T {
  if (value === undefined)
    throw new ProtocolError("INVALID_ARGUMENT", `EDF flags ${what} but the value has none`);
  return value;
}

function toU64(decimal: string, what: string): bigint {
  const value = /^[0-9]{1,20}$/.test(decimal) ? BigInt(decimal) : -1n;
  if (value < 0n || value > 0xffffffffffffffffn)
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      `${what} must be an unsigned 64-bit decimal string, got ${JSON.stringify(decimal)}`,
    );
  return value;
}

function edfOf(info: SourceInfo): number | undefined {
  if (info.edf !== undefined) return info.edf;
  const flags =
    (info.port !== undefined ? EDF_PORT : 0) |
    (info.steamId !== undefined ? EDF_STEAM_ID : 0) |
    (info.tvPort !== undefined || info.tvName !== undefined ? EDF_SOURCE_TV : 0) |
    (info.keywords !== undefined ? EDF_KEYWORDS : 0) |
    (info.gameId !== undefined ? EDF_GAME_ID : 0);
  return flags === 0 ? undefined : flags;
}

/** Encodes a Source A2S_INFO reply (FF FF FF FF 49 ...). The Ship fields are written when `theShip` is set. */
export function encodeSourceInfo(info: SourceInfo): Buffer {
  const w: PacketWriter = startSinglePacket(S2A_INFO_SRC).u8(info.protocol);
  writeText(w, info.name, info.nameHex);
  writeText(w, info.map, info.mapHex);
  writeText(w, info.folder, info.folderHex);
  writeText(w, info.game, info.gameHex);
  w.u16le(info.appId).u8(info.players).u8(info.maxPlayers).u8(info.bots);
  w.u8(charToByte(info.serverType, "serverType")).u8(charToByte(info.environment, "environment"));
  w.u8(info.visibility).u8(info.vac);
  if (info.theShip) w.u8(info.theShip.mode).u8(info.theShip.witnesses).u8(info.theShip.duration);
  writeText(w, info.version, info.versionHex);
  const edf = edfOf(info);
  if (edf === undefined) return w.toBuffer();
  w.u8(edf);
  if (edf & EDF_PORT) w.u16le(requireField(info.port, "a port"));
  if (edf & EDF_STEAM_ID) w.u64le(toU64(requireField(info.steamId, "a steamId"), "steamId"));
  if (edf & EDF_SOURCE_TV) {
    w.u16le(requireField(info.tvPort, "a tvPort"));
    writeText(w, requireField(info.tvName, "a tvName"), info.tvNameHex);
  }
  if (edf & EDF_KEYWORDS) writeText(w, requireField(info.keywords, "keywords"), info.keywordsHex);
  if (edf & EDF_GAME_ID) w.u64le(toU64(requireField(info.gameId, "a gameId"), "gameId"));
  return w.toBuffer();
}
