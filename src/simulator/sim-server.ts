/**
 * What one simulated A2S server says, without sockets: request bytes in, datagrams out. Replies are
 * built with the protocol library's own response encoders and split layouts, the way a real server
 * lays them out; the wire behaviour (challenges, loss, duplication, reordering, delay, silence,
 * malformed answers) comes from the spec's SimBehaviour and is deterministic from its seed.
 */
import {
  isProtocolError,
  encodeChallengeResponse,
  encodeInfoResponse,
  type A2SInfo,
  encodePingResponse,
  encodePlayersResponse,
  decodeRequest,
  encodeRulesResponse,
} from "../protocol";
import { splitResponse } from "./split-response";
import { playersOf, rulesOf } from "./content";
import { PlayerSessions } from "./player-sessions";
import { LegacySimServer, isLegacySimProtocol } from "./legacy-server";
import { behaviourOf } from "./behaviour";
import type {
  SimBehaviour,
  SimPlayer,
  SimReply,
  SimServerSpec,
  SimServerStats,
} from "./fleet-spec";
import { Random, hash32, hashString } from "./random";

export type { SimReply, SimServerStats } from "./fleet-spec";

const THE_SHIP_APP_ID = 2400;

type ContentKind = "source-info" | "goldsrc-info" | "players" | "rules";

export interface SimServerOptions {
  /**
   * When set, players' connection times run on as on a real server: each A2S_PLAYER reply reports a
   * player's spec duration plus the whole seconds since the server started, read from this clock (ms).
   * A populated server's player list then differs between two crawls, as every real one's does; without it
   * the replies never change and a steady crawl writes only what it must for an unchanged server.
   */
  playerClockMs?: () => number;
  /**
   * With a player clock: players also leave and others join (player-sessions.ts), so a populated server's
   * player names change between crawls as a real one's do. @defaultValue false
   */
  playerSessions?: boolean;
  /**
   * Seconds of the server's life per second of the player clock, so that a bench whose crawls follow each
   * other within a minute or two sees what crawls minutes apart see. @defaultValue 1
   */
  playerClockRate?: number;
}

export class SimServer {
  readonly behaviour: SimBehaviour;
  private readonly random: Random;
  private readonly cache = new Map<ContentKind, Buffer[]>();
  private nextSplitId: number;
  readonly stats: SimServerStats = {
    requests: 0,
    garbage: 0,
    challengesSent: 0,
    repliesSent: 0,
    datagramsDropped: 0,
  };
  /** Servers of an older protocol (spec.protocol) answer through the legacy encoders instead. */
  private readonly legacy: LegacySimServer | null;

  private readonly playerClockMs: (() => number) | null;
  private readonly startedAtMs: number;
  private readonly playerClockRate: number;
  private readonly playerSessions: boolean;
  /** Built at the first players reply, and again after setPopulation. */
  private sessions: PlayerSessions | null = null;
  /** Seconds since the start that the cached players reply reports. */
  private playersAgeSeconds = 0;

  constructor(
    readonly spec: SimServerSpec,
    options: SimServerOptions = {},
  ) {
    this.playerClockMs = options.playerClockMs ?? null;
    this.startedAtMs = this.playerClockMs?.() ?? 0;
    this.playerClockRate = options.playerClockRate ?? 1;
    if (!(this.playerClockRate > 0)) throw new RangeError("playerClockRate must be above 0");
    this.playerSessions = options.playerSessions === true;
    this.behaviour = behaviourOf(spec);
    this.legacy = isLegacySimProtocol(spec.protocol)
      ? new LegacySimServer(spec, spec.protocol, this.stats)
      : null;
    this.random = new Random(hash32(spec.seed ?? 0, 3));
    this.nextSplitId = hash32(spec.seed ?? 0, 4) & 0x7fffffff;
  }

  /**
   * Changes how many players (and bots) the server reports from now on, as a real server's population
   * moves through the day (the demo drives this); the cached replies are encoded again.
   */
  setPopulation(players: number, bots = Math.min(this.spec.state.bots, players)): void {
    this.spec.state.players = Math.max(0, Math.min(players, this.spec.state.maxPlayers));
    this.spec.state.bots = Math.max(0, Math.min(bots, this.spec.state.players));
    this.sessions = null;
    this.cache.clear();
  }

  /** The challenge this server hands one client: stable per client, like a real server's. */
  challengeFor(clientKey: string): Buffer {
    let value = hash32(this.spec.seed ?? 0, hashString(clientKey));
    if (value === 0xffffffff) value = 0x12345678;
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value);
    return b;
  }

  /** The answer to one request from `clientKey` ("address|port"); null = say nothing. */
  respond(request: Buffer, clientKey: string): SimReply | null {
    if (this.legacy !== null && !this.behaviour.silent)
      return this.legacy.respond(request, clientKey);
    this.stats.requests += 1;
    if (this.behaviour.silent) return null;
    let decoded;
    try {
      decoded = decodeRequest(request);
    } catch {
      this.stats.garbage += 1;
      return null;
    }
    const b = this.behaviour;
    const challenged = (wanted: boolean): boolean =>
      wanted && !(decoded.challenge?.equals(this.challengeFor(clientKey)) ?? false);
    let datagrams: Buffer[];
    switch (decoded.kind) {
      case "getchallenge":
        datagrams = [this.challengeReply(clientKey)];
        break;
      case "ping":
        datagrams = [encodePingResponse()];
        break;
      case "info":
        if (challenged(b.challenge === "all")) datagrams = [this.challengeReply(clientKey)];
        else datagrams = this.infoDatagrams();
        break;
      case "players":
      case "rules": {
        if (decoded.kind === "rules" && !b.answersRules) return null;
        const needs = b.challenge !== "none" || b.legacyChallenge;
        if (challenged(needs)) {
          // Legacy servers ignore -1 and hand out challenges only through `W`.
          if (b.legacyChallenge && decoded.challenge === undefined) return null;
          datagrams = [this.challengeReply(clientKey)];
        } else {
          datagrams = this.freshIds(this.content(decoded.kind));
        }
        break;
      }
    }
    this.stats.repliesSent += 1;
    return { datagrams: this.disturb(datagrams), delayMs: b.delayMs };
  }

  /**
   * Encodes (and splits, and compresses) every reply this server gives now instead of at its first query.
   * A real server has its answers ready and costs the querying machine nothing; a fleet sharing that
   * machine would otherwise spend its first queries encoding (bzip2 in JavaScript among it).
   */
  prepareReplies(): void {
    if (this.legacy !== null || this.behaviour.silent) return;
    try {
      this.infoDatagrams();
      this.content("players");
      if (this.behaviour.answersRules) this.content("rules");
    } catch {
      // A spec the encoders refuse: its query fails the same way later, and the fleet answers it with silence.
    }
  }

  private challengeReply(clientKey: string): Buffer {
    this.stats.challengesSent += 1;
    return encodeChallengeResponse(this.challengeFor(clientKey));
  }

  private infoDatagrams(): Buffer[] {
    const format = this.behaviour.infoFormat;
    const out: Buffer[] = [];
    if (format === "goldsrc" || format === "both") out.push(...this.content("goldsrc-info"));
    if (format === "source" || format === "both") out.push(...this.content("source-info"));
    if (this.behaviour.malformed)
      return out.map((d) => d.subarray(0, Math.max(6, Math.floor(d.length / 2))));
    return this.freshIds(out);
  }

  /**
   * Replies change only with the state (setPopulation) and, with a player clock, the players reply once a
   * second, so each is encoded, compressed and split once until then.
   */
  private content(kind: ContentKind): Buffer[] {
    if (kind === "players" && this.playerClockMs !== null) {
      const ageSeconds = Math.floor(
        ((this.playerClockMs() - this.startedAtMs) * this.playerClockRate) / 1000,
      );
      if (ageSeconds !== this.playersAgeSeconds) {
        this.playersAgeSeconds = ageSeconds;
        this.cache.delete(kind);
      }
    }
    let datagrams = this.cache.get(kind);
    if (!datagrams) {
      this.stats.repliesEncoded = (this.stats.repliesEncoded ?? 0) + 1;
      datagrams = this.split(this.encode(kind));
      this.cache.set(kind, datagrams);
    }
    return datagrams;
  }

  private encode(kind: ContentKind): Buffer {
    const { state } = this.spec;
    switch (kind) {
      case "source-info":
        return encodeInfoResponse(sourceInfoOf(this.spec, this.behaviour));
      case "goldsrc-info":
        return encodeInfoResponse(goldSrcInfoOf(this.spec));
      case "players": {
        const players = this.playersNow().map((p, index) => {
          const entry = { index, name: p.name, score: p.score, duration: p.durationSeconds };
          return p.deaths === undefined
            ? entry
            : { ...entry, deaths: p.deaths, money: p.money ?? 0 };
        });
        return encodePlayersResponse(
          { count: players.length, players },
          { appId: state.appId & 0xffff },
        );
      }
      case "rules": {
        const rules = rulesOf(this.spec);
        return encodeRulesResponse({ count: rules.length, rules });
      }
    }
  }

  /** The players at the age the players reply reports, their durations run on by it. */
  private playersNow(): SimPlayer[] {
    const age = this.playersAgeSeconds;
    if (!this.playerSessions || this.playerClockMs === null)
      return playersOf(this.spec).map((p) => ({ ...p, durationSeconds: p.durationSeconds + age }));
    this.sessions ??= new PlayerSessions(
      this.spec.seed ?? 0,
      playersOf(this.spec),
      this.spec.state.bots,
    );
    return this.sessions.at(age);
  }

  private split(payload: Buffer): Buffer[] {
    const b = this.behaviour;
    if (payload.length <= b.maxPacketBytes) return [payload];
    const options = {
      format: b.splitFormat,
      id: 0,
      maxPacketBytes: b.maxPacketBytes,
      compress: b.compress && b.splitFormat === "source",
      sizeField: b.sizeField,
    };
    try {
      return splitResponse(payload, options);
    } catch (err) {
      // Compression needs the bzip2 program; without it the server still answers, uncompressed.
      if (!(options.compress && isProtocolError(err, "NOT_SUPPORTED"))) throw err;
      this.stats.compressionUnavailable = true;
      return splitResponse(payload, { ...options, compress: false });
    }
  }

  /** A new response id per reply (as real servers count them), keeping the compressed bit. */
  private freshIds(datagrams: Buffer[]): Buffer[] {
    if (datagrams.length < 2 && !(datagrams[0] !== undefined && datagrams[0].readInt32LE(0) === -2))
      return datagrams;
    this.nextSplitId = (this.nextSplitId + 1) & 0x7fffffff;
    return datagrams.map((d) => {
      if (d.readInt32LE(0) !== -2) return d;
      const copy = Buffer.from(d);
      const compressedBit =
        this.behaviour.splitFormat === "source" ? (d.readUInt32LE(4) & 0x80000000) >>> 0 : 0;
      copy.writeUInt32LE((this.nextSplitId | compressedBit) >>> 0, 4);
      return copy;
    });
  }

  /** Loss, duplication and reordering, drawn from the server's own generator. */
  private disturb(datagrams: Buffer[]): Buffer[] {
    const b = this.behaviour;
    if (b.lossRate === 0 && b.duplicateRate === 0 && !b.reorder) return datagrams;
    const out: Buffer[] = [];
    for (const d of datagrams) {
      if (this.random.chance(b.lossRate)) {
        this.stats.datagramsDropped += 1;
        continue;
      }
      out.push(d);
      if (this.random.chance(b.duplicateRate)) out.push(d);
    }
    return b.reorder && out.length > 1 ? this.random.shuffle(out) : out;
  }
}

function theShipOf(
  spec: SimServerSpec,
): { mode: number; witnesses: number; duration: number } | undefined {
  if (spec.state.appId !== THE_SHIP_APP_ID) return undefined;
  const random = new Random(hash32(spec.seed ?? 0, 5));
  return { mode: random.int(0, 5), witnesses: random.int(1, 4), duration: random.int(2, 5) };
}

/**
 * The Source `I` reply a spec's state makes. App ids above 65535 go out masked, whole in gameId.
 * Protocol 48 marks a GoldSrc server, and clients (GameDig) take it to mean the GoldSrc split
 * layout: so it follows the split layout the server uses.
 */
export function sourceInfoOf(
  spec: SimServerSpec,
  behaviour: SimBehaviour = behaviourOf(spec),
): A2SInfo {
  const { state } = spec;
  const theShip = theShipOf(spec);
  return {
    type: "source",
    protocol: behaviour.splitFormat === "goldsrc" ? 48 : 17,
    name: state.name,
    map: state.map,
    folder: state.folder,
    game: state.game,
    appId: state.appId & 0xffff,
    players: Math.min(state.players, 255),
    maxPlayers: Math.min(state.maxPlayers, 255),
    bots: Math.min(state.bots, 255),
    serverType: state.serverType,
    environment: state.environment,
    visibility: state.passwordProtected ? 1 : 0,
    vac: state.vacSecured ? 1 : 0,
    ...(theShip ? { theShip } : {}),
    version: state.version,
    port: state.gamePort,
    steamId: String(90000000000000000n + BigInt(hash32(spec.seed ?? 0, 6))),
    ...(state.keywords.length > 0 ? { keywords: state.keywords.join(",") } : {}),
    gameId: String(state.appId),
  };
}

/** The obsolete GoldSrc `m` reply a spec's state makes. */
export function goldSrcInfoOf(spec: SimServerSpec): A2SInfo {
  const { state } = spec;
  return {
    type: "goldsrc",
    address: `${spec.host.includes(":") ? `[${spec.host}]` : spec.host}:${state.gamePort}`,
    name: state.name,
    map: state.map,
    folder: state.folder,
    game: state.game,
    players: Math.min(state.players, 255),
    maxPlayers: Math.min(state.maxPlayers, 255),
    protocol: 47,
    serverType: state.serverType.toUpperCase(),
    environment: state.environment.toUpperCase(),
    visibility: state.passwordProtected ? 1 : 0,
    isMod: 0,
    vac: state.vacSecured ? 1 : 0,
    bots: Math.min(state.bots, 255),
  };
}
