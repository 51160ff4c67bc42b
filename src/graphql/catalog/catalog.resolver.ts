/** Top lists by current players: games (app id + folder) and maps, with server counts. */
import "reflect-metadata";
import { Arg, Ctx, Field, Int, ObjectType, Query, Resolver } from "type-graphql";
import { Prisma } from "../../generated/prisma/client";
import type { ApiContext } from "../context";
import { BadUserInputError } from "../errors";

@ObjectType({ description: "A game (app id and game directory) with its current population." })
export class Game {
  @Field(() => Int, { nullable: true })
  appId!: number | null;

  @Field(() => String, { nullable: true, description: "Game directory." })
  folder!: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The game description most of its servers report.",
  })
  name!: string | null;

  @Field(() => Int, { description: "Players on its servers now." })
  players!: number;

  @Field(() => Int)
  bots!: number;

  @Field(() => Int, { description: "Servers online now." })
  servers!: number;
}

@ObjectType({ description: "A map with its current population." })
export class MapStat {
  @Field(() => String)
  map!: string;

  @Field(() => Int)
  players!: number;

  @Field(() => Int)
  servers!: number;
}

/** Online, listed, and not a relay: what the top lists count; suspected fakes unless asked for. */
function counted(excludeSuspectedFakes: boolean): Prisma.Sql {
  return excludeSuspectedFakes
    ? Prisma.sql`g.status = 'ONLINE' AND NOT g.hidden AND NOT g.suspected_fake AND NOT g.is_relay`
    : Prisma.sql`g.status = 'ONLINE' AND NOT g.hidden AND NOT g.is_relay`;
}
const EXCLUDE_FAKES_ARG = {
  defaultValue: true,
  description: "Leave out suspected fakes (docs/fake-players.md); false counts them too.",
};
const MAX_TOP = 500;

function top(first: number): number {
  if (!Number.isInteger(first) || first < 1 || first > MAX_TOP)
    throw new BadUserInputError("first", `must be between 1 and ${MAX_TOP}`);
  return first;
}

@Resolver()
export class CatalogResolver {
  @Query(() => [Game], { complexity: 10, description: "Games by players online now, most first." })
  async games(
    @Ctx() ctx: ApiContext,
    @Arg("first", () => Int, { defaultValue: 50 }) first: number,
    @Arg("excludeSuspectedFakes", () => Boolean, EXCLUDE_FAKES_ARG) excludeSuspectedFakes = true,
  ): Promise<Game[]> {
    const rows = await ctx.prisma.$queryRaw<
      Array<{
        app_id: number | null;
        folder: string | null;
        name: string | null;
        players: number;
        bots: number;
        servers: number;
      }>
    >`
      SELECT g.app_id, g.folder, mode() WITHIN GROUP (ORDER BY g.game) AS name, sum(g.players)::int AS players,
             COALESCE(sum(g.bots), 0)::int AS bots, count(*)::int AS servers
      FROM game_server g WHERE ${counted(excludeSuspectedFakes)}
      GROUP BY g.app_id, g.folder
      ORDER BY players DESC, servers DESC, g.app_id NULLS LAST, g.folder NULLS LAST
      LIMIT ${top(first)}`;
    return rows.map((r) =>
      Object.assign(new Game(), {
        appId: r.app_id,
        folder: r.folder,
        name: r.name,
        players: r.players,
        bots: r.bots,
        servers: r.servers,
      }),
    );
  }

  @Query(() => [MapStat], {
    complexity: 10,
    description: "Maps by players online now, most first; optionally of one game.",
  })
  async maps(
    @Ctx() ctx: ApiContext,
    @Arg("folder", () => String, { nullable: true }) folder?: string | null,
    @Arg("appId", () => Int, { nullable: true }) appId?: number | null,
    @Arg("first", () => Int, { defaultValue: 50 }) first = 50,
    @Arg("excludeSuspectedFakes", () => Boolean, EXCLUDE_FAKES_ARG) excludeSuspectedFakes = true,
  ): Promise<MapStat[]> {
    const conds = [counted(excludeSuspectedFakes), Prisma.sql`g.map IS NOT NULL`];
    if (folder != null) conds.push(Prisma.sql`g.folder = ${folder}`);
    if (appId != null) conds.push(Prisma.sql`g.app_id = ${appId}`);
    const rows = await ctx.prisma.$queryRaw<
      Array<{ map: string; players: number; servers: number }>
    >`
      SELECT g.map, sum(g.players)::int AS players, count(*)::int AS servers
      FROM game_server g WHERE ${Prisma.join(conds, " AND ")}
      GROUP BY g.map ORDER BY players DESC, servers DESC, g.map
      LIMIT ${top(first)}`;
    return rows.map((r) => Object.assign(new MapStat(), r));
  }
}
