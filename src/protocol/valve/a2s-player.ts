/**
 * A2S_PLAYER request and reply (S2A_PLAYER, 0x44). Spec: Valve's "Server Queries" page; docs/protocols.md "A2S_PLAYER".
 *
 * Request: FF FF FF FF 55 challenge(4 bytes; FF FF FF FF asks for one).
 * Reply:
 * | field          | type    | notes                                                      |
 * |----------------|---------|------------------------------------------------------------|
 * | header, type   | i32, u8 | FF FF FF FF 44                                             |
 * | count          | u8      | wraps past 255 players: entries are read until data ends   |
 * | per entry: index u8, name cstring, score i32, duration f32 (seconds; -1 for bots seen)  |
 * | The Ship only: count x (deaths i32, money i32) after ALL entries; count trusted there  |
 *
 * Truncation policy (docs/protocols.md): a list that ends early (an entry cut mid-way, or fewer
 * entries than the count byte) is returned with the complete entries and `truncated: true`
 * (variant-gameq-csgo-1-players-truncated). Anything before the list must be whole.
 */
import { ProtocolError } from "../errors";
import type { PacketReader } from "../wire/packet-reader";
import { PacketWriter } from "../wire/packet-writer";
import { A2S_PLAYER, NO_CHALLENGE, S2A_PLAYER, SINGLE_PACKET_HEADER } from "./constants";
import { quirksFor } from "./quirks";
import {
  requestWithChallenge,
  encoding,
  openSinglePacket,
  startSinglePacket,
  writeText,
} from "./single-packet";

/** One A2S_PLAYER entry (JSON contract: index, name, score, duration, deaths?, money?). */
export interface Player {
  /** Index byte as sent (often 0 for every entry). */
  index: number;
  name: string;
  /** Exact bytes (hex) of `name` when not valid UTF-8. */
  nameHex?: string;
  score: number;
  /** Seconds connected, the exact float32 from the wire. */
  duration: number;
  /** The Ship only. */
  deaths?: number;
  /** The Ship only. */
  money?: number;
}

/** A decoded A2S_PLAYER reply. */
export interface PlayersResult {
  /** The count byte as sent (wraps past 255; The Ship trusts it). */
  count: number;
  players: Player[];
  /** Set when the list ended before all announced entries (see the truncation policy). */
  truncated?: true;
}

/** What a client knows from A2S_INFO that changes how a reply is laid out. */
export interface DecodeContext {
  appId?: number;
}

/** FF FF FF FF 55, before the challenge. */
const PLAYER_PREFIX = new PacketWriter().i32le(SINGLE_PACKET_HEADER).u8(A2S_PLAYER).toBuffer();

/** A2S_PLAYER request; without a challenge it sends FF FF FF FF, which asks the server for one. */
export function encodePlayerRequest(challenge: Buffer = NO_CHALLENGE): Buffer {
  return requestWithChallenge(PLAYER_PREFIX, challenge);
}

/** One entry, or null when the data ends inside it (truncated). */
function readEntry(reader: PacketReader): Player | null {
  try {
    const index = reader.u8("player index");
    const name = reader.cstringExact("player name");
    const player: Player = { index, name: name.value, score: 0, duration: 0 };
    if (name.hex !== undefined) player.nameHex = name.hex;
    player.score = reader.i32le("player score");
    player.duration = reader.f32le("player duration");
    return player;
  } catch (err) {
    if (err instanceof ProtocolError && err.code === "TRUNCATED") return null;
    throw err;
  }
}

/** Decodes an A2S_PLAYER reply from a full single payload. `context.appId` selects The Ship's layout. */
export function decodePlayersResponse(payload: Buffer, context: DecodeContext = {}): PlayersResult {
  const { reader } = openSinglePacket(payload, [S2A_PLAYER], "A2S_PLAYER reply");
  const count = reader.u8("player count");
  const players: Player[] = [];
  let truncated = false;
  const theShip = quirksFor(context.appId).playerLayout === "the-ship";
  while (!reader.atEnd && (!theShip || players.length < count)) {
    const player = readEntry(reader);
    if (player === null) {
      truncated = true;
      break;
    }
    players.push(player);
  }
  if (players.length < count) truncated = true;
  if (theShip && !truncated && !reader.atEnd) {
    for (const player of players) {
      if (reader.remaining < 8) {
        truncated = true;
        break;
      }
      player.deaths = reader.i32le("deaths");
      player.money = reader.i32le("money");
    }
  }
  return truncated ? { count, players, truncated: true } : { count, players };
}

/** Encodes an A2S_PLAYER reply; `count` is written as given (a server with >255 players wraps it). */
export function encodePlayersResponse(result: PlayersResult, context: DecodeContext = {}): Buffer {
  return encoding("A2S_PLAYER reply", () => writePlayers(result, context));
}

function writePlayers(result: PlayersResult, context: DecodeContext): Buffer {
  const w = startSinglePacket(S2A_PLAYER).u8(result.count & 0xff);
  for (const p of result.players) {
    w.u8(p.index);
    writeText(w, p.name, p.nameHex);
    w.i32le(p.score).f32le(p.duration);
  }
  if (quirksFor(context.appId).playerLayout === "the-ship") {
    for (const p of result.players) w.i32le(p.deaths ?? 0).i32le(p.money ?? 0);
  }
  return w.toBuffer();
}
