/**
 * Doom 3 family `getInfo` / `getInfoEx`: Doom 3, Quake 4, Prey, ETQW (Wolfenstein 2009 on request).
 *
 * Spec: docs/protocols-legacy.md; server side idAsyncServer::ProcessGetInfoMessage.
 * Every integer is little-endian; the header is only TWO FF bytes.
 *
 * | bytes                          | meaning                                                          |
 * |--------------------------------|------------------------------------------------------------------|
 * | FF FF, cstr header             | infoResponse / infoExResponse                                    |
 * | 4 bytes                        | challenge echo                                                   |
 * | [u32 FFFFFFFF]                 | ETQW only (detected by value)                                     |
 * | u32 protocol                   | (major << 16) | minor                                             |
 * | [u32 size]                     | ETQW only: bytes after it (detected by value)                    |
 * | (cstr key, cstr value)…, 00, removed keys…, 00 | server dictionary                                 |
 * | players: u8 id … until id 32   | layout by protocol major (PLAYER_LAYOUTS), trial parse fallback   |
 * | u32 osMask                     |                                                                  |
 * | ETQW: u8 ranked, u32 timeLeftMs, u8 gameState, u8 serverType, 0 → u8 interested / 1 → u32 connected, u32 max |
 * | infoEx: u8 id, f32 xp, cstr team, i32 kills, i32 deaths … until id 32 |                          |
 *
 * Which player layout a protocol version uses is wire knowledge (the engine changed its writer),
 * not a per-game quirk, so it lives here. Deviations: d3-quake4-1 (5 unknown bytes after the OS
 * mask, kept as `trailing`), d3-etqw-2 (3-byte challenge request, garbage 4th byte echoed).
 */
import { ProtocolError } from "../errors";
import { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import type { KeyValue, LegacyDecodeOptions, TextEncoding } from "./text";

export const DOOM3_HEADER = Buffer.from([0xff, 0xff]);
export const DOOM3_INFO_RESPONSE = "infoResponse";
export const DOOM3_INFOEX_RESPONSE = "infoExResponse";
export const ETQW_EXTRA_WORD = 0xffffffff;

export type Doom3Header = typeof DOOM3_INFO_RESPONSE | typeof DOOM3_INFOEX_RESPONSE;

/**
 * Player entry layouts:
 * - doom3: u16 ping, u32 rate, cstr name (Doom 3, Prey)
 * - quake4: u16 ping, u32 rate, cstr name, cstr clanTag
 * - etqw: u16 ping, cstr name, u8 clanTagPosition, cstr clanTag, u8 typeFlag (ETQW >= 10.17)
 * - etqw-old: u16 ping, u32 rate, cstr name, u8 typeFlag (ETQW < 10.17)
 * - wolfenstein: u16 ping, u16 rate, u16 unknown, cstr name, u8 tagPos, cstr tag, u8 bot; ends at id 16
 */
export type Doom3PlayerLayout = "doom3" | "quake4" | "etqw" | "etqw-old" | "wolfenstein";

const TRIAL_ORDER: readonly Doom3PlayerLayout[] = [
  "doom3",
  "quake4",
  "etqw",
  "etqw-old",
  "wolfenstein",
];

/** The layout a protocol version implies (observed versions). */
export function layoutForProtocol(major: number, minor: number): Doom3PlayerLayout {
  if (major === 2) return "quake4";
  if (major >= 10) return major === 10 && minor < 17 ? "etqw-old" : "etqw";
  return "doom3"; // 1.x Doom 3, 3.x/4.x Prey
}

function terminatorFor(layout: Doom3PlayerLayout): number {
  return layout === "wolfenstein" ? 16 : 32;
}

function hasEtqwTail(layout: Doom3PlayerLayout): boolean {
  return layout === "etqw" || layout === "etqw-old";
}

export interface Doom3Player {
  id: number;
  pingMs: number;
  /** Client rate (bytes/s) where the layout has one, else null. */
  rate: number | null;
  name: string;
  clanTag: string | null;
  /** ETQW: 0 = tag before the name, 1 = after. */
  clanTagPosition: number | null;
  /** ETQW type flag: true for bots; null where the layout has no flag. */
  isBot: boolean | null;
}

export interface EtqwTail {
  ranked: boolean;
  timeLeftMs: number;
  gameState: number;
  /** 0 regular server, 1 ETTV. */
  serverType: number;
  interestedClients: number | null;
  connectedClients: number | null;
  maxClients: number | null;
}

export interface EtqwPlayerEx {
  id: number;
  xp: number;
  team: string;
  kills: number;
  deaths: number;
}

export interface Doom3Response {
  header: Doom3Header;
  /** The 4 challenge bytes echoed. */
  challenge: Buffer;
  /** The ETQW word between challenge and protocol, or null. */
  etqwExtra: number | null;
  protocolMajor: number;
  protocolMinor: number;
  /** ETQW size field (bytes after it), or null. */
  sizeField: number | null;
  info: KeyValue[];
  layout: Doom3PlayerLayout;
  players: Doom3Player[];
  osMask: number;
  etqw: EtqwTail | null;
  /** infoExResponse's second player block, else null. */
  playersEx: EtqwPlayerEx[] | null;
  /** Bytes after everything understood (Quake 4 sends 5), kept for diagnostics. */
  trailing: Buffer;
}

/** `FF FF getInfo 00 <challenge i32le>` (or getInfoEx, ETQW). Send exactly 4 challenge bytes. */
export function encodeDoom3InfoRequest(challenge: number, options: { ex?: boolean } = {}): Buffer {
  if (
    !Number.isInteger(challenge) ||
    challenge < -0x80000000 ||
    challenge > 0x7fffffff ||
    challenge === -1
  ) {
    throw new ProtocolError(
      "INVALID_ARGUMENT",
      "Doom 3 challenge must be an int32 other than -1 (FFFFFFFF is the ETQW marker)",
    );
  }
  return new PacketWriter()
    .bytes(DOOM3_HEADER)
    .cstring(options.ex === true ? "getInfoEx" : "getInfo")
    .i32le(challenge)
    .toBuffer();
}

export interface Doom3DecodeOptions extends LegacyDecodeOptions {
  /** Force a player layout instead of choosing by protocol version (Wolfenstein 2009). */
  layout?: Doom3PlayerLayout;
}

export function decodeDoom3Response(
  packet: Buffer,
  options: Doom3DecodeOptions = {},
): Doom3Response {
  const encoding = options.encoding ?? "latin1";
  const r = new PacketReader(packet);
  const magic = r.bytes(2, "header");
  if (!magic.equals(DOOM3_HEADER))
    throw new ProtocolError("UNEXPECTED_RESPONSE", "not a Doom 3 reply (expected FF FF)", {
      offset: 0,
    });
  const headerOffset = r.offset;
  const headerText = r.cstringBytes("response header").toString("latin1");
  if (headerText !== DOOM3_INFO_RESPONSE && headerText !== DOOM3_INFOEX_RESPONSE) {
    throw new ProtocolError(
      "UNEXPECTED_RESPONSE",
      `unexpected Doom 3 response '${headerText.slice(0, 32)}'`,
      { offset: headerOffset },
    );
  }
  const header: Doom3Header = headerText;
  const challenge = Buffer.from(r.bytes(4, "challenge"));
  let etqwExtra: number | null = null;
  if (r.remaining >= 4 && packet.readUInt32LE(r.offset) === ETQW_EXTRA_WORD)
    etqwExtra = r.u32le("ETQW word");
  const protocol = r.u32le("protocol version");
  const protocolMajor = protocol >>> 16;
  const protocolMinor = protocol & 0xffff;
  let sizeField: number | null = null;
  if (etqwExtra !== null && protocolMajor >= 10) {
    // ETQW always sends the size after the protocol: a size beyond the datagram means it was cut.
    const sizeOffset = r.offset;
    sizeField = r.u32le("size");
    if (sizeField > r.remaining) {
      throw new ProtocolError(
        "TRUNCATED",
        `ETQW size field says ${sizeField} bytes follow, ${r.remaining} do`,
        { offset: sizeOffset },
      );
    }
  } else if (r.remaining >= 4 && packet.readUInt32LE(r.offset) === r.remaining - 4) {
    sizeField = r.u32le("size");
  }
  const info = decodeDictionary(r, encoding);
  const primary = options.layout ?? layoutForProtocol(protocolMajor, protocolMinor);
  const bodyOffset = r.offset;
  const tryLayout = (layout: Doom3PlayerLayout) =>
    decodeBody(new PacketReader(packet, bodyOffset), layout, header, encoding);
  let body: ReturnType<typeof decodeBody>;
  try {
    body = tryLayout(primary);
  } catch (err) {
    if (!(err instanceof ProtocolError) || options.layout !== undefined) throw err;
    body = tryOthers(primary, tryLayout, err);
  }
  return { header, challenge, etqwExtra, protocolMajor, protocolMinor, sizeField, info, ...body };
}

function tryOthers<T extends { trailing: Buffer }>(
  primary: Doom3PlayerLayout,
  attempt: (l: Doom3PlayerLayout) => T,
  firstError: ProtocolError,
): T {
  // gamedig's robust approach: keep the first other layout that reads the body to its last byte.
  for (const layout of TRIAL_ORDER) {
    if (layout === primary) continue;
    try {
      const body = attempt(layout);
      if (body.trailing.length === 0) return body;
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
    }
  }
  throw firstError;
}

function decodeDictionary(r: PacketReader, encoding: TextEncoding): KeyValue[] {
  const info: KeyValue[] = [];
  for (;;) {
    const key = r.cstringBytes("dictionary key").toString(encoding);
    if (key === "") break;
    info.push({ key, value: r.cstringBytes(`value of ${key.slice(0, 32)}`).toString(encoding) });
  }
  // idBitMsg::WriteDeltaDict then lists removed keys (none in a full dictionary) up to an empty one.
  while (r.cstringBytes("removed key").length > 0);
  return info;
}

function decodeBody(
  r: PacketReader,
  layout: Doom3PlayerLayout,
  header: Doom3Header,
  encoding: TextEncoding,
) {
  const text = (what: string): string => r.cstringBytes(what).toString(encoding);
  const terminator = terminatorFor(layout);
  const players: Doom3Player[] = [];
  for (let previous = -1; ;) {
    const idOffset = r.offset;
    const id = r.u8("player id");
    if (id === terminator) break;
    if (id > terminator || id <= previous) {
      throw new ProtocolError(
        "MALFORMED",
        `player id ${id} out of order for the ${layout} layout`,
        { offset: idOffset },
      );
    }
    previous = id;
    const pingMs = r.u16le("ping");
    let rate: number | null = null;
    let clanTag: string | null = null;
    let clanTagPosition: number | null = null;
    let isBot: boolean | null = null;
    let name: string;
    switch (layout) {
      case "doom3":
        rate = r.u32le("rate");
        name = text("player name");
        break;
      case "quake4":
        rate = r.u32le("rate");
        name = text("player name");
        clanTag = text("clan tag");
        break;
      case "etqw":
        name = text("player name");
        clanTagPosition = r.u8("clan tag position");
        clanTag = text("clan tag");
        isBot = r.u8("type flag") === 1;
        break;
      case "etqw-old":
        rate = r.u32le("rate");
        name = text("player name");
        isBot = r.u8("type flag") === 1;
        break;
      case "wolfenstein":
        rate = r.u16le("rate");
        r.u16le("unknown");
        name = text("player name");
        clanTagPosition = r.u8("clan tag position");
        clanTag = text("clan tag");
        isBot = r.u8("bot flag") === 1;
        break;
    }
    players.push({ id, pingMs, rate, name, clanTag, clanTagPosition, isBot });
  }
  const osMask = r.u32le("OS mask");
  let etqw: EtqwTail | null = null;
  let playersEx: EtqwPlayerEx[] | null = null;
  if (hasEtqwTail(layout)) {
    const ranked = r.u8("ranked") !== 0;
    const timeLeftMs = r.u32le("time left");
    const gameState = r.u8("game state");
    const serverType = r.u8("server type");
    let interestedClients: number | null = null;
    let connectedClients: number | null = null;
    let maxClients: number | null = null;
    if (serverType === 1) {
      connectedClients = r.u32le("connected clients");
      maxClients = r.u32le("max clients");
    } else {
      interestedClients = r.u8("interested clients");
    }
    etqw = {
      ranked,
      timeLeftMs,
      gameState,
      serverType,
      interestedClients,
      connectedClients,
      maxClients,
    };
    if (header === DOOM3_INFOEX_RESPONSE) {
      playersEx = [];
      for (;;) {
        const id = r.u8("player id");
        if (id === terminator) break;
        if (id > terminator)
          throw new ProtocolError("MALFORMED", `extended player id ${id} out of range`, {
            offset: r.offset - 1,
          });
        const xp = r.f32le("xp");
        const team = text("team");
        playersEx.push({ id, xp, team, kills: r.i32le("kills"), deaths: r.i32le("deaths") });
      }
    }
  }
  return { layout, players, osMask, etqw, playersEx, trailing: Buffer.from(r.rest()) };
}

/** Server side (simulator, round-trip tests). `sizeField` is recomputed when it is not null. */
export function encodeDoom3Response(
  response: Doom3Response,
  encoding: TextEncoding = "latin1",
): Buffer {
  const body = new PacketWriter();
  for (const { key, value } of response.info) body.cstring(key, encoding).cstring(value, encoding);
  body.u8(0).u8(0);
  for (const p of response.players) {
    body.u8(p.id).u16le(p.pingMs);
    switch (response.layout) {
      case "doom3":
        body.u32le(p.rate ?? 0).cstring(p.name, encoding);
        break;
      case "quake4":
        body
          .u32le(p.rate ?? 0)
          .cstring(p.name, encoding)
          .cstring(p.clanTag ?? "", encoding);
        break;
      case "etqw":
        body
          .cstring(p.name, encoding)
          .u8(p.clanTagPosition ?? 0)
          .cstring(p.clanTag ?? "", encoding)
          .u8(p.isBot === true ? 1 : 0);
        break;
      case "etqw-old":
        body
          .u32le(p.rate ?? 0)
          .cstring(p.name, encoding)
          .u8(p.isBot === true ? 1 : 0);
        break;
      case "wolfenstein":
        body
          .u16le(p.rate ?? 0)
          .u16le(0)
          .cstring(p.name, encoding)
          .u8(p.clanTagPosition ?? 0)
          .cstring(p.clanTag ?? "", encoding)
          .u8(p.isBot === true ? 1 : 0);
        break;
    }
  }
  const terminator = terminatorFor(response.layout);
  body.u8(terminator).u32le(response.osMask);
  if (response.etqw !== null) {
    const t = response.etqw;
    body
      .u8(t.ranked ? 1 : 0)
      .u32le(t.timeLeftMs)
      .u8(t.gameState)
      .u8(t.serverType);
    if (t.serverType === 1) body.u32le(t.connectedClients ?? 0).u32le(t.maxClients ?? 0);
    else body.u8(t.interestedClients ?? 0);
    if (response.playersEx !== null) {
      for (const p of response.playersEx)
        body.u8(p.id).f32le(p.xp).cstring(p.team, encoding).i32le(p.kills).i32le(p.deaths);
      body.u8(terminator);
    }
  }
  body.bytes(response.trailing);
  const w = new PacketWriter()
    .bytes(DOOM3_HEADER)
    .cstring(response.header, "latin1")
    .bytes(response.challenge);
  if (response.etqwExtra !== null) w.u32le(response.etqwExtra);
  w.u32le(((response.protocolMajor << 16) | response.protocolMinor) >>> 0);
  const bodyBytes = body.toBuffer();
  if (response.sizeField !== null) w.u32le(bodyBytes.length);
  return w.bytes(bodyBytes).toBuffer();
}
