/**
 * The API shape of one game server: its identity, current state (as last seen, players and rules
 * included) and flags. `history` and `source` are field resolvers (game-server.resolver.ts) that go
 * through the per-request loaders. All times are UTC.
 * `simpleResolvers`: the plain fields are read by graphql-js's default resolver instead of a
 * type-graphql wrapper each (no middlewares or auth checks are used), which a page of servers calls
 * hundreds of times.
 */
import "reflect-metadata";
import { Field, Float, Int, ObjectType, registerEnumType } from "type-graphql";

export enum GameServerStatus {
  UNKNOWN = "UNKNOWN",
  ONLINE = "ONLINE",
  OFFLINE = "OFFLINE",
  DELISTED = "DELISTED",
}
registerEnumType(GameServerStatus, {
  name: "GameServerStatus",
  description:
    "ONLINE answered its last query; OFFLINE failed several in a row (last good state kept); DELISTED no longer listed by its source; UNKNOWN not (yet) answered or never queried by policy.",
});

export enum PlayerCountSource {
  A2S_INFO = "A2S_INFO",
  A2S_PLAYER = "A2S_PLAYER",
  MANAGEMENT = "MANAGEMENT",
  LEGACY_STATUS = "LEGACY_STATUS",
  STEAM_WEB_API = "STEAM_WEB_API",
}
registerEnumType(PlayerCountSource, {
  name: "PlayerCountSource",
  description: "Where a player count comes from.",
  valuesConfig: {
    A2S_INFO: {
      description:
        "The count in the server's A2S_INFO answer (servers may inflate it with fake players).",
    },
    A2S_PLAYER: {
      description:
        "The length of the server's A2S_PLAYER list: used when the list is longer than A2S_INFO's one-byte count can say (more than 255 players).",
    },
    MANAGEMENT: {
      description:
        "What the server reported to the management server it registered with; never queried.",
    },
    LEGACY_STATUS: {
      description:
        "An older protocol's status answer (Quake, GameSpy, Doom 3, ASE, Half-Life WON): its player field, or its player lines counted.",
    },
    STEAM_WEB_API: {
      description: "The Steam Web API's record of the server, before its own answer arrived.",
    },
  },
});

export enum ServerOs {
  LINUX = "linux",
  WINDOWS = "windows",
  MAC = "mac",
}
registerEnumType(ServerOs, { name: "ServerOs" });

/** The rules of docs/fake-players.md; the values are the database enum's. */
export enum FakeReason {
  PORT_FARM = "PORT_FARM",
  PLAYERS_ABOVE_MAX = "PLAYERS_ABOVE_MAX",
  INFO_ABOVE_PLAYER_LIST = "INFO_ABOVE_PLAYER_LIST",
  SAME_NAME_PLAYERS = "SAME_NAME_PLAYERS",
  ZERO_DURATION_PLAYERS = "ZERO_DURATION_PLAYERS",
  SHARED_PLAYER_NAMES = "SHARED_PLAYER_NAMES",
}
registerEnumType(FakeReason, {
  name: "FakeReason",
  description:
    "Why a server is a suspected fake (each rule and its threshold: docs/fake-players.md).",
  valuesConfig: {
    PORT_FARM: {
      description: "More query ports on its IP than FAKE_PORTS_PER_IP (a farm of fake servers).",
    },
    PLAYERS_ABOVE_MAX: { description: "A2S_INFO reports more players than max players." },
    INFO_ABOVE_PLAYER_LIST: {
      description: "A2S_INFO's player count far above the A2S_PLAYER list.",
    },
    SAME_NAME_PLAYERS: { description: "Many players in its list share one name." },
    ZERO_DURATION_PLAYERS: { description: "Many players in its list connected for zero seconds." },
    SHARED_PLAYER_NAMES: {
      description: "Its player names were on many other servers at the same time.",
    },
  },
});

@ObjectType({ description: "A player as last seen.", simpleResolvers: true })
export class Player {
  @Field(() => String)
  name!: string;

  @Field(() => Int, { nullable: true })
  score!: number | null;

  @Field(() => Float, {
    nullable: true,
    description: "Time connected, in seconds, as the server reported it.",
  })
  durationSeconds!: number | null;

  @Field(() => Int, { nullable: true })
  pingMs!: number | null;

  @Field(() => String, { nullable: true })
  team!: string | null;
}

@ObjectType({ description: "A server rule (cvar) as last seen.", simpleResolvers: true })
export class Rule {
  @Field(() => String)
  name!: string;

  @Field(() => String)
  value!: string;
}

@ObjectType({
  description: "One key/value exactly as an older-protocol server sent it (colour codes kept).",
  simpleResolvers: true,
})
export class RawValue {
  @Field(() => String)
  key!: string;

  @Field(() => String)
  value!: string;
}

@ObjectType({
  description: "One game server (address + query port) and its state as last seen.",
  simpleResolvers: true,
})
export class GameServer {
  @Field(() => Int)
  id!: number;

  @Field(() => String, {
    description: "IP literal (or host name for management-server registrations).",
  })
  address!: string;

  @Field(() => Int)
  queryPort!: number;

  @Field(() => Int, { nullable: true })
  gamePort!: number | null;

  @Field(() => String, { description: "Query protocol: 'source', 'quake3', 'gamespy2', ..." })
  protocol!: string;

  @Field(() => Int, {
    nullable: true,
    description: "Valve master region code it was listed under.",
  })
  region!: number | null;

  @Field(() => String, {
    nullable: true,
    description: "ISO 3166-1 alpha-2 country code, when known.",
  })
  country!: string | null;

  @Field(() => GameServerStatus)
  status!: GameServerStatus;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field(() => String, { nullable: true })
  map!: string | null;

  @Field(() => String, { nullable: true, description: "Game directory (A2S folder)." })
  folder!: string | null;

  @Field(() => String, {
    nullable: true,
    description: "Game description as the server reports it.",
  })
  game!: string | null;

  @Field(() => Int, { nullable: true })
  appId!: number | null;

  @Field(() => String, { nullable: true, description: "64-bit game id, as a decimal string." })
  gameId!: string | null;

  @Field(() => Int, {
    description: "Players online at the last answer (bots included, as servers report them).",
  })
  players!: number;

  @Field(() => PlayerCountSource, {
    nullable: true,
    description: "Where `players` comes from; null when there is no count yet.",
  })
  playersSource!: PlayerCountSource | null;

  @Field(() => Int)
  maxPlayers!: number;

  @Field(() => Int, { nullable: true })
  bots!: number | null;

  @Field(() => Boolean, { nullable: true })
  passwordProtected!: boolean | null;

  @Field(() => Boolean, { nullable: true })
  vacSecured!: boolean | null;

  @Field(() => Boolean, { nullable: true })
  dedicated!: boolean | null;

  @Field(() => ServerOs, { nullable: true })
  os!: ServerOs | null;

  @Field(() => String, { nullable: true })
  version!: string | null;

  @Field(() => [String], { description: "Tags (A2S keywords)." })
  keywords!: string[];

  @Field(() => String, { nullable: true })
  steamId!: string | null;

  @Field(() => Int, { nullable: true })
  pingMs!: number | null;

  @Field(() => [Player], { description: "Players at the last answer." })
  playerList!: Player[];

  @Field(() => [Rule], { description: "Rules at the last answer (some servers never send them)." })
  rules!: Rule[];

  @Field(() => [RawValue], {
    nullable: true,
    description:
      "Older protocols (Quake, GameSpy, Doom 3, ASE, ...): every key/value of the last answer as sent, beside the normalised fields; null for A2S.",
  })
  raw!: RawValue[] | null;

  @Field(() => Date)
  firstSeenAt!: Date;

  @Field(() => Date, { nullable: true, description: "Last time a list source listed it." })
  lastListedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  lastQueriedAt!: Date | null;

  @Field(() => Date, {
    nullable: true,
    description: 'Last time it answered a query ("last seen").',
  })
  lastAnsweredAt!: Date | null;

  @Field(() => String, { nullable: true, description: "Error code of the last failed query." })
  lastError!: string | null;

  @Field(() => Boolean, {
    description:
      "Looks like a fake (farm of ports on one IP, inflated player counts): left out of games, maps, population and default server lists. fakeReasons says which rules fired.",
  })
  suspectedFake!: boolean;

  @Field(() => [FakeReason], {
    description: "The rules that fired (empty when none did, or when the flag was set by hand).",
  })
  fakeReasons!: FakeReason[];

  @Field(() => Boolean, {
    description: "Steam Datagram Relay address: cannot be queried directly.",
  })
  isRelay!: boolean;

  @Field(() => Boolean, {
    description: "Private, reserved or blocked address: indexed, never queried.",
  })
  notQueryable!: boolean;

  @Field(() => Boolean, { description: "Hidden from lists by an operator." })
  hidden!: boolean;

  @Field(() => Boolean, {
    description: "Registered with the management server: its state is what it reports.",
  })
  managementRegistered!: boolean;

  /** Not a GraphQL field: the `source` field resolver loads it. */
  sourceId!: number | null;
}
