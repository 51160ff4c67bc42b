/**
 * One simulated server of an older protocol (Quake 2/3, GameSpy v1/v2/v3, Doom 3, Half-Life WON,
 * ASE), without sockets: request bytes in, datagrams out. What it says is its protocol's server side
 * (the `answer` of the protocol's module in the registry, built with the protocol's own encoders);
 * this class holds the per-server state (statistics, the GameSpy v1 serial, per-client challenges).
 * The same `respond` shape as SimServer, so the fleet runs both. State, players and rules come from
 * the SimServerSpec (players generated from its seed).
 */
import { type ServedState, PROTOCOL_REGISTRY, type ProtocolId } from "../protocol";
import { playersOf, rulesOf } from "./content";
import type { SimReply, SimServerSpec, SimServerStats } from "./fleet-spec";
import { hash32, hashString } from "./random";

export type LegacySimProtocol = Exclude<ProtocolId, "source" | "bomberman">;

/** Largest GameSpy v1 / v3 datagram the simulator sends: small enough that big player lists split. */
const SIM_DATAGRAM_BYTES = 1200;

export function isLegacySimProtocol(
  protocol: ProtocolId | undefined,
): protocol is LegacySimProtocol {
  return protocol !== undefined && protocol !== "source" && protocol !== "bomberman";
}

/** A player name as the simulated legacy servers send it (ASCII only). */
export function asciiOnly(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "");
}

export class LegacySimServer {
  private queryId: number;

  /** `stats` may be shared with the SimServer that delegates here. */
  constructor(
    readonly spec: SimServerSpec,
    readonly protocol: LegacySimProtocol,
    readonly stats: SimServerStats = {
      requests: 0,
      garbage: 0,
      challengesSent: 0,
      repliesSent: 0,
      datagramsDropped: 0,
    },
  ) {
    this.queryId = (hash32(spec.seed ?? 0, 5) % 90) + 1;
  }

  /** GameSpy v3 challenge for one client: stable per client, never 0 (0 means "none"). */
  challengeFor(clientKey: string): number {
    return (hash32(this.spec.seed ?? 0, hashString(clientKey)) % 0x7ffffffe) + 1;
  }

  respond(request: Buffer, clientKey: string): SimReply | null {
    this.stats.requests += 1;
    const datagrams = this.answer(request, clientKey);
    if (datagrams === null) {
      this.stats.garbage += 1;
      return null;
    }
    this.stats.repliesSent += datagrams.length;
    return { datagrams, delayMs: 0 };
  }

  /** The state the protocol's server side answers from: the spec's, with players and rules generated from its seed. */
  private served(): ServedState {
    const s = this.spec.state;
    const playerList = playersOf(this.spec).map((p, i) => ({
      ...p,
      // ASCII only: the older protocols name no text encoding, and clients read bytes beyond ASCII differently
      // (GameDig reads ASE's as UTF-8, gsindex as Latin-1), so a letter beyond it has no one right answer.
      name: asciiOnly(p.name),
      pingMs: i >= s.players - s.bots ? 0 : 20 + ((i * 37) % 180),
    }));
    return { ...s, host: this.spec.host, playerList, rules: rulesOf(this.spec) };
  }

  private answer(request: Buffer, clientKey: string): Buffer[] | null {
    const answer = PROTOCOL_REGISTRY[this.protocol].answer;
    if (answer === undefined) return null;
    return answer(request, this.served(), {
      clientKey,
      challenge: () => this.challengeFor(clientKey),
      onChallenge: () => {
        this.stats.challengesSent += 1;
      },
      nextQueryId: () => {
        this.queryId = (this.queryId % 100) + 1;
        return this.queryId;
      },
      splitId: hash32(this.spec.seed ?? 0, 6) & 0x7fffffff,
      maxDatagramBytes: SIM_DATAGRAM_BYTES,
    });
  }
}
