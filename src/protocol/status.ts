/**
 * The normalised, cross-protocol shape of one answered query: what the crawler stores and the
 * API serves, whatever protocol the server speaks. Decoders return their protocol's own shape;
 * each protocol's adapter maps it here (per-game fixes applied in that mapping, never in decoders).
 */
export type ProtocolId =
  | "source" // Valve A2S, Source and GoldSrc answers alike
  | "quake2"
  | "quake3"
  | "gamespy1"
  | "gamespy2"
  | "gamespy3"
  | "doom3"
  | "halflife" // WON-era string queries
  | "ase"
  | "bomberman"; // servers of the management server (docs/list-sources.md): state is what the game server reports, never queried

export const PROTOCOL_IDS: readonly ProtocolId[] = [
  "source",
  "quake2",
  "quake3",
  "gamespy1",
  "gamespy2",
  "gamespy3",
  "doom3",
  "halflife",
  "ase",
  "bomberman",
];

export interface StatusPlayer {
  name: string;
  score: number | null;
  durationSeconds: number | null;
  pingMs?: number | null;
  team?: string | null;
  deaths?: number | null;
  money?: number | null;
  /** The player's fields exactly as sent (older protocols: colour codes kept, any extra fields). */
  raw?: Record<string, string>;
}

export interface StatusRule {
  name: string;
  value: string;
}

export interface ServerStatus {
  protocol: ProtocolId;
  name: string;
  map: string;
  /** Game directory (A2S folder, gamedir / gamename key elsewhere). */
  folder: string | null;
  /** Human game description. */
  game: string | null;
  appId: number | null;
  /** 64-bit game id as a decimal string. */
  gameId: string | null;
  players: number;
  maxPlayers: number;
  bots: number | null;
  passwordProtected: boolean | null;
  vacSecured: boolean | null;
  dedicated: boolean | null;
  os: "linux" | "windows" | "mac" | null;
  version: string | null;
  /** Tags (A2S keywords split on commas). */
  keywords: string[];
  gamePort: number | null;
  steamId: string | null;
  playerList: StatusPlayer[];
  rules: StatusRule[];
  /** Raw key/values as the server sent them (older protocols), for clients that want everything. */
  raw: Record<string, string> | null;
  pingMs: number | null;
  /** A2S server type, when the protocol says: dedicated, listen or SourceTV proxy. */
  serverType?: "dedicated" | "listen" | "proxy" | null;
  /** SourceTV port and name (A2S EDF 0x40), when present. */
  tvPort?: number | null;
  tvName?: string | null;
  /** True when a multi-datagram reply was incomplete at the deadline: the data is what arrived. */
  partial?: boolean;
}
