import type { ProtocolId } from "../protocol";

/**
 * What a simulated game server is: its address, the region a simulated master files it under,
 * and the state it reports. The A2S simulator answers queries from this; the simulated master
 * lists and filters on it. How the simulated server behaves on the wire (answer format, challenge
 * mode, splitting, compression, loss, ...) is the optional `behaviour`; its player list and rules are
 * generated from `seed` unless given.
 */
export interface SimServerState {
  name: string;
  map: string;
  folder: string;
  game: string;
  appId: number;
  players: number;
  maxPlayers: number;
  bots: number;
  /** 'd' dedicated, 'l' listen, 'p' SourceTV proxy. */
  serverType: "d" | "l" | "p";
  /** 'l' linux, 'w' windows, 'm' mac. */
  environment: "l" | "w" | "m";
  passwordProtected: boolean;
  vacSecured: boolean;
  version: string;
  keywords: string[];
  gamePort: number;
}

export interface SimServerAddress {
  /** A loopback address (127.0.0.0/8 or ::1). */
  host: string;
  queryPort: number;
}

export interface SimServerSpec extends SimServerAddress {
  /** The query protocol the server speaks. @defaultValue 'source' (older protocols: src/simulator/legacy-server.ts) */
  protocol?: ProtocolId;
  /** Master region code: 0x00-0x07, or 0xFF. */
  region: number;
  state: SimServerState;
  /** Seeds everything generated for this server: its players, rules, challenges and its loss/reorder draws. */
  seed?: number;
  behaviour?: Partial<SimBehaviour>;
  /** Players to report; generated from `seed` (state.players of them, state.bots bots) when absent. */
  playerList?: SimPlayer[];
  /** Rules to report; generated from `seed` when absent. */
  rules?: SimRule[];
}

/** One player as the simulated server reports it in A2S_PLAYER. */
export interface SimPlayer {
  name: string;
  score: number;
  durationSeconds: number;
  /** The Ship only (app id 2400). */
  deaths?: number;
  money?: number;
}

export interface SimRule {
  name: string;
  value: string;
}

/** How a simulated server behaves on the wire. Every field has a default (DEFAULT_SIM_BEHAVIOUR). */
export interface SimBehaviour {
  /** INFO answer: Source `I`, obsolete GoldSrc `m`, or both (`m` first, then `I`, as some servers do). */
  infoFormat: "source" | "goldsrc" | "both";
  /** Which queries demand a challenge first: none, INFO + PLAYER + RULES, or PLAYER + RULES only. */
  challenge: "none" | "all" | "players-rules";
  /** PLAYER/RULES with challenge -1 get no answer at all; only a challenge from `W` (GETCHALLENGE) works. */
  legacyChallenge: boolean;
  /** Split layout for responses larger than maxPacketBytes. */
  splitFormat: "source" | "goldsrc";
  /** Largest payload sent unsplit; larger responses are split into fragments of about this size. */
  maxPacketBytes: number;
  /** bzip2-compress split responses (Source layout only). */
  compress: boolean;
  /** Source split header carries the 2-byte max packet size (most Source servers). */
  sizeField: boolean;
  /** Probability (0-1) that an outgoing datagram is dropped. */
  lossRate: number;
  /** Probability (0-1) that an outgoing datagram is sent twice. */
  duplicateRate: number;
  /** Send the fragments of a split response in a shuffled order. */
  reorder: boolean;
  /** Delay before every answer. */
  delayMs: number;
  /** Never answers anything. */
  silent: boolean;
  /** INFO answers are cut short (a truncated packet). */
  malformed: boolean;
  /** Answers A2S_RULES at all (many servers have rules disabled). */
  answersRules: boolean;
}

/** Datagrams to send, and after how long. */
export interface SimReply {
  datagrams: Buffer[];
  delayMs: number;
}

export interface SimServerStats {
  requests: number;
  garbage: number;
  challengesSent: number;
  repliesSent: number;
  datagramsDropped: number;
  /** Replies encoded (each kind once, again after a population change or a player clock's second). @defaultValue 0 */
  repliesEncoded?: number;
  /** Set when compression was asked for but the bzip2 program is missing. */
  compressionUnavailable?: boolean;
}
