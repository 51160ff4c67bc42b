/** The Relay connection of `servers`. `totalCount` and `totalPlayers` are counted only when asked for. */
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import type { Prisma } from "../../generated/prisma/client";
import { PageInfo } from "../common/connection";
import { GameServer } from "./game-server.type";
import type { ServerTotals } from "./server-list";

@ObjectType({ simpleResolvers: true })
export class ServerEdge {
  @Field(() => String, {
    description:
      "Opaque and stable: the same server under the same ordering always has the same cursor.",
  })
  cursor!: string;

  @Field(() => GameServer)
  node!: GameServer;
}

@ObjectType({ description: "A page of game servers.", simpleResolvers: true })
export class ServerConnection {
  @Field(() => [ServerEdge])
  edges!: ServerEdge[];

  @Field(() => [GameServer], {
    description: "The nodes of `edges`, for clients that need no cursors.",
  })
  nodes!: GameServer[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  /** The filter, kept for the `totalCount` and `totalPlayers` field resolvers. */
  where!: Prisma.Sql;

  /** One count for both totals when a query asks for both. */
  totals?: Promise<ServerTotals>;
}
