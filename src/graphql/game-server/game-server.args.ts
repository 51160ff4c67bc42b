/** Arguments of `servers`: filter, ordering and Relay pagination. */
import "reflect-metadata";
import { ArgsType, Field, InputType, Int, registerEnumType } from "type-graphql";
import { GameServerStatus, ServerOs } from "./game-server.type";

export enum ServerOrderField {
  PLAYERS = "PLAYERS",
  MAX_PLAYERS = "MAX_PLAYERS",
  NAME = "NAME",
  MAP = "MAP",
  LAST_SEEN = "LAST_SEEN",
  FIRST_SEEN = "FIRST_SEEN",
  PING = "PING",
}
registerEnumType(ServerOrderField, {
  name: "ServerOrderField",
  description:
    "Sort key of `servers`. Ties are broken by id. Unknown values (no name, never seen, no ping) sort last in the direction shown first: NAME/MAP/PING ascending, LAST_SEEN descending.",
});

export enum OrderDirection {
  ASC = "ASC",
  DESC = "DESC",
}
registerEnumType(OrderDirection, { name: "OrderDirection" });

@InputType({ description: "How to sort `servers`." })
export class ServerOrderInput {
  @Field(() => ServerOrderField)
  field!: ServerOrderField;

  @Field(() => OrderDirection, {
    nullable: true,
    description: "Default: DESC for PLAYERS, MAX_PLAYERS, LAST_SEEN, FIRST_SEEN; ASC otherwise.",
  })
  direction?: OrderDirection | null;
}

@InputType({ description: "Every condition given must hold. Hidden servers are never listed." })
export class ServerFilterInput {
  @Field(() => String, {
    nullable: true,
    description: "Text contained in the name (case-insensitive).",
  })
  search?: string | null;

  @Field(() => String, { nullable: true, description: "Game directory (A2S folder), exact." })
  folder?: string | null;

  @Field(() => Int, { nullable: true })
  appId?: number | null;

  @Field(() => String, {
    nullable: true,
    description:
      "Map: exact ('de_dust2'), prefix ('de_*') or wildcard ('*dust*'); case-insensitive.",
  })
  map?: string | null;

  @Field(() => [Int], { nullable: true, description: "Valve region codes (0-7, 255): any of." })
  regions?: number[] | null;

  @Field(() => [String], { nullable: true, description: "ISO country codes: any of." })
  countries?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description: "Protocols ('source', 'quake3', ...): any of.",
  })
  protocols?: string[] | null;

  @Field(() => [String], { nullable: true, description: "Has every one of these tags (keywords)." })
  tagsAll?: string[] | null;

  @Field(() => [String], {
    nullable: true,
    description: "Has at least one of these tags (keywords).",
  })
  tagsAny?: string[] | null;

  @Field(() => Int, { nullable: true })
  playersMin?: number | null;

  @Field(() => Int, { nullable: true })
  playersMax?: number | null;

  @Field(() => Boolean, { nullable: true, description: "At least one player." })
  notEmpty?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: "Fewer players than its maximum." })
  notFull?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: "true: at least one bot; false: no bots." })
  hasBots?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: "true: password protected; false: open." })
  password?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  vac?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  dedicated?: boolean | null;

  @Field(() => ServerOs, { nullable: true })
  os?: ServerOs | null;

  @Field(() => [GameServerStatus], { nullable: true, description: "Any of these statuses." })
  statuses?: GameServerStatus[] | null;

  @Field(() => String, {
    nullable: true,
    description:
      "An IP address ('203.0.113.7') or a CIDR range ('203.0.113.0/24', '2001:db8::/32').",
  })
  address?: string | null;

  @Field(() => Int, { nullable: true, description: "Listed by this source." })
  sourceId?: number | null;

  @Field(() => Int, { nullable: true, description: "Answered a query within this many seconds." })
  lastSeenWithinSeconds?: number | null;

  @Field(() => String, {
    nullable: true,
    description: "A player whose name contains this text was on the server at its last answer.",
  })
  playerName?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    defaultValue: true,
    description: "Leave out suspected fakes and relay addresses (default true).",
  })
  excludeSuspectedFakes?: boolean | null;
}

@ArgsType()
export class ServersArgs {
  @Field(() => ServerFilterInput, { nullable: true })
  filter?: ServerFilterInput | null;

  @Field(() => ServerOrderInput, { nullable: true, description: "Default: PLAYERS DESC." })
  orderBy?: ServerOrderInput | null;

  @Field(() => Int, { nullable: true })
  first?: number | null;

  @Field(() => String, { nullable: true })
  after?: string | null;

  @Field(() => Int, { nullable: true })
  last?: number | null;

  @Field(() => String, { nullable: true })
  before?: string | null;
}
