/**
 * Obsolete GoldSrc A2S_INFO reply (S2A_INFO_DETAILED, 0x6D). Spec: Valve's "Server Queries" page; docs/protocols.md
 * "A2S_INFO".
 *
 * | field        | type       | notes                                                     |
 * |--------------|------------|-----------------------------------------------------------|
 * | header, type | i32, u8    | FF FF FF FF 6D                                            |
 * | address      | cstring    | "ip:port" as the server sees itself                       |
 * | name, map, folder, game | cstring x4 |                                               |
 * | players, maxPlayers, protocol | u8 x3 |                                              |
 * | serverType, environment | char x2 | raw: D/L/P, L/W (some servers send lower case) |
 * | visibility, isMod | u8 x2 | isMod 1: url, download, NUL byte, version i32, size i32, type u8, dll u8 |
 * | vac, bots    | u8 x2      | bots optional (see deviations)                            |
 *
 * Deviations: HLTV proxies end the packet after VAC (xpaw-info-hltv): bots is then 0, as a proxy
 * runs no bots. A server may send this reply and a Source 0x49 reply to one request
 * (gameq-hl1-1-info): each is decoded on its own.
 */
import { ProtocolError } from "../errors";
import type { PacketReader } from "../wire/packet-reader";
import { S2A_INFO_DETAILED } from "./constants";
import { byteToChar, charToByte, startSinglePacket, writeText } from "./single-packet";

/** The mod block of a GoldSrc reply (present when isMod is 1). */
export interface GoldSrcMod {
  /** URL of the mod's website. */
  url: string;
  /** URL to download the mod. */
  download: string;
  version: number;
  /** Size of the mod in bytes. */
  size: number;
  /** 0 single and multiplayer, 1 multiplayer only. */
  type: number;
  /** 0 uses the Half-Life DLL, 1 its own. */
  dll: number;
}

/** A decoded GoldSrc A2S_INFO reply. */
export interface GoldSrcInfo {
  type: "goldsrc";
  /** "ip:port" of the server as it sees itself. */
  address: string;
  name: string;
  nameHex?: string;
  map: string;
  mapHex?: string;
  folder: string;
  folderHex?: string;
  game: string;
  gameHex?: string;
  players: number;
  maxPlayers: number;
  protocol: number;
  /** Raw character: 'D' dedicated, 'L' listen, 'P' HLTV (lower case seen too). */
  serverType: string;
  /** Raw character: 'L' Linux, 'W' Windows. */
  environment: string;
  visibility: number;
  /** Raw byte: 1 when the game is a mod (then `mod` is present). */
  isMod: number;
  mod?: GoldSrcMod;
  vac: number;
  bots: number;
}

/** Decodes the body after FF FF FF FF 6D; `reader` stands on the address string. */
export function decodeGoldSrcInfoBody(reader: PacketReader): GoldSrcInfo {
  const address = reader.cstring("address");
  const name = reader.cstringExact("name");
  const map = reader.cstringExact("map");
  const folder = reader.cstringExact("folder");
  const game = reader.cstringExact("game");
  const info: GoldSrcInfo = {
    type: "goldsrc",
    address,
    name: name.value,
    map: map.value,
    folder: folder.value,
    game: game.value,
    players: 0,
    maxPlayers: 0,
    protocol: 0,
    serverType: "",
    environment: "",
    visibility: 0,
    isMod: 0,
    vac: 0,
    bots: 0,
  };
  if (name.hex !== undefined) info.nameHex = name.hex;
  if (map.hex !== undefined) info.mapHex = map.hex;
  if (folder.hex !== undefined) info.folderHex = folder.hex;
  if (game.hex !== undefined) info.gameHex = game.hex;
  info.players = reader.u8("players");
  info.maxPlayers = reader.u8("max players");
  info.protocol = reader.u8("protocol");
  info.serverType = byteToChar(reader.u8("server type"));
  info.environment = byteToChar(reader.u8("environment"));
  info.visibility = reader.u8("visibility");
  info.isMod = reader.u8("mod flag");
  if (info.isMod === 1) {
    const url = reader.cstring("mod url");
    const download = reader.cstring("mod download url");
    reader.skip(1, "mod NUL byte");
    info.mod = {
      url,
      download,
      version: reader.i32le("mod version"),
      size: reader.i32le("mod size"),
      type: reader.u8("mod type"),
      dll: reader.u8("mod dll"),
    };
  }
  const vacOffset = reader.offset;
  info.vac = reader.u8("VAC");
  if (info.vac > 1)
    throw new ProtocolError("MALFORMED", `VAC byte is 0x${info.vac.toString(16)}, not 0 or 1`, {
      offset: vacOffset,
    });
  if (!reader.atEnd) info.bots = reader.u8("bots");
  return info;
}

/** Encodes a GoldSrc A2S_INFO reply (FF FF FF FF 6D ...). */
export function encodeGoldSrcInfo(info: GoldSrcInfo): Buffer {
  const w = startSinglePacket(S2A_INFO_DETAILED).cstring(info.address);
  writeText(w, info.name, info.nameHex);
  writeText(w, info.map, info.mapHex);
  writeText(w, info.folder, info.folderHex);
  writeText(w, info.game, info.gameHex);
  w.u8(info.players).u8(info.maxPlayers).u8(info.protocol);
  w.u8(charToByte(info.serverType, "serverType")).u8(charToByte(info.environment, "environment"));
  w.u8(info.visibility).u8(info.isMod);
  if (info.isMod === 1) {
    const mod = info.mod ?? { url: "", download: "", version: 0, size: 0, type: 0, dll: 0 };
    w.cstring(mod.url)
      .cstring(mod.download)
      .u8(0)
      .i32le(mod.version)
      .i32le(mod.size)
      .u8(mod.type)
      .u8(mod.dll);
  }
  return w.u8(info.vac).u8(info.bots).toBuffer();
}
