/**
 * Deterministic fleets: makeFleet({ count, seed, ... }) gives the same SimServerSpec list for the same
 * options, so several processes can each build their own slice (makeServerSpec) and a master
 * simulator can list the very servers an A2S fleet answers for.
 */
import { PROTOCOL_REGISTRY, QUERYABLE_PROTOCOL_IDS } from "../protocol";
import type { SimBehaviour, SimServerSpec } from "./fleet-spec";
import { SERVER_NAME_PARTS, SIM_GAMES, type SimGame } from "./games";
import { isLegacySimProtocol, type LegacySimProtocol } from "./legacy-server";
import { Random, hash32 } from "./random";

export { behaviourOf } from "./behaviour";

/** Master region codes: 0x00-0x07 and 0xFF (rest of the world). */
export const SIM_REGIONS: readonly number[] = [
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xff,
];

/** Fractions (0-1) of the fleet drawn with each unusual behaviour; each is drawn independently. */
export interface FleetMix {
  /** INFO challenge too (late-2020 servers); the rest of challengePlayersRules only challenge PLAYER/RULES. */
  challengeAll: number;
  challengePlayersRules: number;
  /** PLAYER/RULES only after a `W` GETCHALLENGE. */
  legacyChallenge: number;
  /** Source servers that answer INFO with both `m` and `I`. */
  bothInfo: number;
  /** Enough rules (and long values) that A2S_RULES is split. */
  bigRules: number;
  /** Split responses bzip2-compressed (of the Source servers with big rules). */
  compressed: number;
  lossy: number;
  duplicating: number;
  reordering: number;
  slow: number;
  silent: number;
  malformed: number;
  /** Never answers A2S_RULES. */
  noRules: number;
  /**
   * Speaks an older protocol instead of A2S (Quake 2/3, GameSpy v1/v2/v3, Doom 3, Half-Life WON, ASE;
   * see legacy-server.ts), drawn from its own stream so the rest of a fleet stays as it was. @defaultValue 0
   */
  legacyProtocols?: number;
}

/**
 * The older protocols a mixed fleet draws from (every protocol of the registry but A2S, in its order),
 * and how far each one's query port is from the game port (its usual game's, in the games table).
 */
const LEGACY_FLEET_PROTOCOLS: ReadonlyArray<[LegacySimProtocol, number]> =
  QUERYABLE_PROTOCOL_IDS.filter(isLegacySimProtocol).map((id) => [
    id,
    PROTOCOL_REGISTRY[id].defaultGame.queryPortOffset ?? 0,
  ]);

/** A fleet that looks like the real world: mostly well-behaved, with every oddity represented. */
export const DEFAULT_FLEET_MIX: FleetMix = {
  challengeAll: 0.5,
  challengePlayersRules: 0.35,
  legacyChallenge: 0.02,
  bothInfo: 0.03,
  bigRules: 0.2,
  compressed: 0.25,
  lossy: 0.03,
  duplicating: 0.03,
  reordering: 0.1,
  slow: 0.03,
  silent: 0.02,
  malformed: 0.005,
  noRules: 0.1,
};

export interface MakeFleetOptions {
  count: number;
  seed: number;
  /** Loopback addresses to spread the fleet over, in blocks of serversPerHost. @defaultValue ['127.0.0.1'] */
  hosts?: readonly string[];
  /** First query port on every host; 0 lets the OS pick each port at start (tests). @defaultValue 27015 */
  basePort?: number;
  /** @defaultValue ceil(count / hosts.length) */
  serversPerHost?: number;
  mix?: Partial<FleetMix>;
  /** Behaviour forced on every server (tests). */
  behaviour?: Partial<SimBehaviour>;
}

/** The index-th server of a fleet; makeFleet(options)[i] equals makeServerSpec(options, i). */
export function makeServerSpec(options: MakeFleetOptions, index: number): SimServerSpec {
  const hosts = options.hosts ?? ["127.0.0.1"];
  const perHost = options.serversPerHost ?? Math.max(1, Math.ceil(options.count / hosts.length));
  const basePort = options.basePort ?? 27015;
  const host = hosts[Math.floor(index / perHost)];
  if (host === undefined)
    throw new RangeError(
      `server ${index} needs more than ${hosts.length} host(s) at ${perHost} per host`,
    );
  const queryPort = basePort === 0 ? 0 : basePort + (index % perHost);
  if (queryPort > 65535)
    throw new RangeError(`port ${queryPort} is out of range: lower basePort or serversPerHost`);

  const seed = hash32(options.seed, index);
  const random = new Random(seed);
  const game = pickGame(random);
  const mix = { ...DEFAULT_FLEET_MIX, ...options.mix };
  const maxPlayers = random.pick(game.maxPlayers);
  const empty = random.chance(0.3);
  const players = empty ? 0 : random.int(1, Math.min(maxPlayers, 255));
  const bots = players === 0 ? 0 : random.chance(0.2) ? random.int(0, Math.min(players, 8)) : 0;
  const name = [
    random.pick(SERVER_NAME_PARTS.prefix),
    random.pick(SERVER_NAME_PARTS.community),
    game.game,
    random.pick(SERVER_NAME_PARTS.suffix),
  ]
    .filter((part) => part !== "")
    .join(" ");

  const behaviour: Partial<SimBehaviour> = {};
  const draw = random.next();
  if (game.engine === "source") {
    if (draw < mix.challengeAll) behaviour.challenge = "all";
    else if (draw < mix.challengeAll + mix.challengePlayersRules)
      behaviour.challenge = "players-rules";
    if (random.chance(mix.bothInfo)) behaviour.infoFormat = "both";
  } else {
    behaviour.splitFormat = "goldsrc";
    if (draw < mix.challengePlayersRules) behaviour.challenge = "players-rules";
  }
  if (behaviour.challenge !== "none" && random.chance(mix.legacyChallenge))
    behaviour.legacyChallenge = true;
  const bigRules = random.chance(mix.bigRules);
  if (bigRules && game.engine === "source" && random.chance(mix.compressed))
    behaviour.compress = true;
  if (random.chance(mix.lossy)) behaviour.lossRate = 0.2;
  if (random.chance(mix.duplicating)) behaviour.duplicateRate = 0.3;
  if (random.chance(mix.reordering)) behaviour.reorder = true;
  if (random.chance(mix.slow)) behaviour.delayMs = random.int(200, 800);
  if (random.chance(mix.silent)) behaviour.silent = true;
  if (random.chance(mix.malformed)) behaviour.malformed = true;
  if (random.chance(mix.noRules)) behaviour.answersRules = false;

  let legacy: [LegacySimProtocol, number] | null = null;
  if ((mix.legacyProtocols ?? 0) > 0) {
    const own = new Random(hash32(seed, 7));
    if (own.chance(mix.legacyProtocols ?? 0)) legacy = own.pick(LEGACY_FLEET_PROTOCOLS);
  }

  return {
    ...(legacy === null ? {} : { protocol: legacy[0] }),
    host,
    queryPort,
    region: random.pick(SIM_REGIONS),
    seed,
    state: {
      name,
      map: random.pick(game.maps),
      folder: game.folder,
      game: game.game,
      appId: game.appId,
      players,
      maxPlayers,
      bots,
      serverType: random.chance(0.95) ? "d" : "l",
      environment: random.chance(0.8) ? "l" : "w",
      passwordProtected: random.chance(0.1),
      vacSecured: random.chance(0.85),
      version: game.version,
      keywords: bigRules ? [...game.tags, "bigrules"] : [...game.tags],
      gamePort: legacy === null || queryPort === 0 ? queryPort : Math.max(1, queryPort - legacy[1]),
    },
    behaviour: { ...behaviour, ...options.behaviour },
  };
}

export function makeFleet(options: MakeFleetOptions): SimServerSpec[] {
  const specs: SimServerSpec[] = [];
  for (let i = 0; i < options.count; i++) specs.push(makeServerSpec(options, i));
  return specs;
}

const TOTAL_WEIGHT = SIM_GAMES.reduce((sum, g) => sum + g.weight, 0);

function pickGame(random: Random): SimGame {
  let at = random.next() * TOTAL_WEIGHT;
  for (const game of SIM_GAMES) {
    at -= game.weight;
    if (at < 0) return game;
  }
  return SIM_GAMES[0] as SimGame;
}
