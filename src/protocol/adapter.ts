/**
 * The shape of one protocol's module (src/protocol/protocols/<protocol>.ts): everything about a
 * protocol sits in that one file (its query, its normalisation to ServerStatus, decoding captured
 * datagrams, its per-game quirks); the codecs it uses sit beside it in valve/ or legacy/. The
 * registry (registry.ts) lists every module once and adds the default ports from the games table
 * (games.ts); the crawler, the CLI and the simulator go through the registry only.
 */
import { ProtocolError } from "./errors";
import type { LegacyGameQuirks } from "./legacy/quirks";
import type { ProtocolId, ServerStatus } from "./status";
import type { UdpTransport } from "./transport/udp-transport";
import type { QueryOptions, ServerAddress } from "./types";

export interface ProtocolQueryOptions extends QueryOptions {
  /** The transport to send through. @defaultValue the process-wide one (transport/default-transport.ts) */
  transport?: UdpTransport;
}

export interface ProtocolModule {
  id: Exclude<ProtocolId, "bomberman">;
  /** Human name, for help texts and docs. */
  name: string;
  /**
   * Query one game server at its query port and normalise the answer; failures are ProtocolErrors
   * (TIMEOUT for a silent server). A multi-datagram reply cut short at the deadline is a status with
   * `partial: true`, not a failure.
   */
  queryStatus(address: ServerAddress, options?: ProtocolQueryOptions): Promise<ServerStatus>;
  /** Captured reply datagrams (any order) → the status a query would have returned. */
  decodeStatus?(packets: readonly Buffer[]): ServerStatus;
  /** The per-game corrections the normalisation applies to a reply with these raw key/values. */
  quirksFor?(raw: Readonly<Record<string, string>>): LegacyGameQuirks;
  /**
   * The server side: the datagrams a server in `state` sends for `request`, null to say nothing (not
   * this protocol's request). The simulator speaks every protocol that has one through it.
   */
  answer?(request: Buffer, state: ServedState, context: AnswerContext): Buffer[] | null;
}

/** What a server says about itself, for a protocol's server side. */
export interface ServedState {
  host: string;
  name: string;
  map: string;
  folder: string;
  game: string;
  version: string;
  gamePort: number;
  players: number;
  maxPlayers: number;
  bots: number;
  passwordProtected: boolean;
  vacSecured: boolean;
  /** 'd' dedicated, 'l' listen, 'p' SourceTV proxy. */
  serverType: "d" | "l" | "p";
  /** 'l' linux, 'w' windows, 'm' mac. */
  environment: "l" | "w" | "m";
  playerList: ReadonlyArray<{
    name: string;
    score: number;
    pingMs: number;
    durationSeconds: number;
  }>;
  rules: ReadonlyArray<{ name: string; value: string }>;
}

/** The per-server, per-client state a protocol's server side needs. */
export interface AnswerContext {
  /** The client asking ("address|port"). */
  clientKey: string;
  /** This server's challenge for that client: stable per client, never 0. */
  challenge(): number;
  /** Called when a challenge is handed out. */
  onChallenge(): void;
  /** The next query serial (GameSpy v1 numbers each answer). */
  nextQueryId(): number;
  /** Id of a split answer. */
  splitId: number;
  /** Largest datagram to send where the protocol splits by size. */
  maxDatagramBytes: number;
}

/** The first datagram of a reply that is one datagram; INVALID_ARGUMENT when there is none. */
export function onlyDatagram(packets: readonly Buffer[], protocol: string): Buffer {
  const [first] = packets;
  if (first === undefined)
    throw new ProtocolError("INVALID_ARGUMENT", `no datagram to decode as ${protocol}`);
  return first;
}
