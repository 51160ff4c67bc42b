/** Query.servers / server / serverByAddress and the GameServer fields that read beyond its row. */
import "reflect-metadata";
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";
import { Prisma } from "../../generated/prisma/client";
import { sampleIntervalMs } from "../../shared/config";
import { Arg, Args, Ctx, FieldResolver, Info, Int, Query, Resolver, Root } from "type-graphql";
import { DEFAULT_PAGE_SIZE } from "../api-config";
import { PageInfo, toPageRequest } from "../common/connection";
import { parseIp } from "../common/ip";
import type { ApiContext } from "../context";
import { BadUserInputError, NotFoundError } from "../errors";
import { DAY_MS, HOUR_MS, planHistory } from "../history/history-plan";
import { HistoryResolution } from "../history/history-resolution";
import { ServerHistory } from "../history/history.type";
import { toMasterSource } from "../source/source.mapper";
import { MasterSource } from "../source/source.type";
import { ServerOrderField, ServersArgs } from "./game-server.args";
import { toGameServer } from "./game-server.mapper";
import { GameServer } from "./game-server.type";
import { ServerConnection, ServerEdge } from "./server-connection.type";
import { buildServerWhere } from "./server-filter";
import { countServers, listServerPage, readServer, SERVER_FIELDS } from "./server-list";
import { SORT_KEYS } from "./server-order";

export function historySettings(ctx: ApiContext) {
  return {
    now: ctx.now,
    rawWindowMs: ctx.config.historyRawDays * DAY_MS,
    rawMaxRangeMs: ctx.config.apiRawHistoryMaxHours * HOUR_MS,
    sampleIntervalMs: sampleIntervalMs(ctx.config),
  };
}

/**
 * The GameServer fields the query may show below this field: every field name anywhere in its selection
 * (fragments included, @skip/@include ignored), so a column is read whenever it might be shown; a
 * name that belongs to another type only costs a column.
 */
function requestedServerFields(info: GraphQLResolveInfo): Set<string> {
  const found = new Set<string>();
  const seenFragments = new Set<string>();
  const walk = (set: SelectionSetNode | undefined): void => {
    for (const sel of set?.selections ?? []) {
      if (sel.kind === Kind.FIELD) {
        if (SERVER_FIELDS.has(sel.name.value)) found.add(sel.name.value);
        walk(sel.selectionSet);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet);
      } else if (!seenFragments.has(sel.name.value)) {
        seenFragments.add(sel.name.value);
        walk(info.fragments[sel.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes) walk(node.selectionSet);
  return found;
}

function checkPort(name: string, port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new BadUserInputError(name, "must be a port number (1-65535)");
  return port;
}

@Resolver(() => GameServer)
export class GameServerResolver {
  @Query(() => ServerConnection, {
    description:
      "Game servers, filtered, sorted and paged with Relay cursors (keyset: every page costs the same).",
  })
  async servers(
    @Args(() => ServersArgs) args: ServersArgs,
    @Ctx() ctx: ApiContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<ServerConnection> {
    const page = toPageRequest(args, DEFAULT_PAGE_SIZE, ctx.config.apiMaxPageSize);
    const field = args.orderBy?.field ?? ServerOrderField.PLAYERS;
    const key = SORT_KEYS[field];
    const direction = args.orderBy?.direction ?? key.defaultDirection;
    const where = buildServerWhere(args.filter, ctx.now);
    const result = await listServerPage(
      ctx.prisma,
      where,
      key,
      direction,
      page,
      requestedServerFields(info),
    );
    const edges = result.rows.map((r) =>
      Object.assign(new ServerEdge(), { cursor: r.cursor, node: toGameServer(r.row) }),
    );
    return Object.assign(new ServerConnection(), {
      edges,
      nodes: edges.map((e) => e.node),
      pageInfo: Object.assign(new PageInfo(), {
        hasNextPage: result.hasNextPage,
        hasPreviousPage: result.hasPreviousPage,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges[edges.length - 1]?.cursor ?? null,
      }),
      where,
    });
  }

  @Query(() => GameServer, {
    nullable: true,
    description: "One game server by id (NOT_FOUND error when there is none).",
  })
  async server(
    @Arg("id", () => Int) id: number,
    @Ctx() ctx: ApiContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<GameServer> {
    const row = await readServer(ctx.prisma, Prisma.sql`g.id = ${id}`, requestedServerFields(info));
    if (!row) throw new NotFoundError(`game server ${id}`);
    return toGameServer(row);
  }

  @Query(() => GameServer, {
    nullable: true,
    description:
      "One game server by IP address and query port (NOT_FOUND error when there is none).",
  })
  async serverByAddress(
    @Arg("address", () => String) address: string,
    @Arg("port", () => Int, { description: "The query port." }) port: number,
    @Ctx() ctx: ApiContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<GameServer> {
    const text = address.trim();
    const ip = parseIp(text);
    if (!ip) throw new BadUserInputError("address", `'${address}' is not an IP address`);
    checkPort("port", port);
    // Stored as listed; an IPv6 address may be written in several ways, so compare as inet too.
    const row = await readServer(
      ctx.prisma,
      Prisma.sql`g.query_port = ${port} AND (g.address = ${text} OR g.ip = ${ip.toString()}::inet)`,
      requestedServerFields(info),
      Prisma.sql`(g.address = ${text}) DESC`,
    );
    if (!row) throw new NotFoundError(`game server ${text} port ${port}`);
    return toGameServer(row);
  }

  @FieldResolver(() => ServerHistory, {
    complexity: 5,
    description: "History over [from, to) (default: the last 24 hours).",
  })
  history(
    @Root() server: GameServer,
    @Ctx() ctx: ApiContext,
    @Arg("from", () => Date, { nullable: true }) from?: Date | null,
    @Arg("to", () => Date, { nullable: true }) to?: Date | null,
    @Arg("lastDays", () => Int, {
      nullable: true,
      description: "The last this many days up to now, instead of from and to.",
    })
    lastDays?: number | null,
    @Arg("resolution", () => HistoryResolution, {
      nullable: true,
      defaultValue: HistoryResolution.AUTO,
    })
    resolution?: HistoryResolution | null,
  ): ServerHistory {
    const plan = planHistory({ from, to, lastDays, resolution }, historySettings(ctx));
    return Object.assign(new ServerHistory(), {
      resolution: plan.resolution,
      bucketSeconds: plan.bucketMs / 1000,
      from: plan.from,
      to: plan.to,
      gameServerId: server.id,
      plan,
    });
  }

  @FieldResolver(() => MasterSource, {
    nullable: true,
    description: "The list source that listed it.",
  })
  async source(@Root() server: GameServer, @Ctx() ctx: ApiContext): Promise<MasterSource | null> {
    if (server.sourceId === null) return null;
    const row = await ctx.loaders.source.load(server.sourceId);
    return row ? toMasterSource(row) : null;
  }
}

@Resolver(() => ServerConnection)
export class ServerConnectionResolver {
  @FieldResolver(() => Int, {
    complexity: 10,
    description: "Servers matching the filter (counted on request).",
  })
  async totalCount(@Root() conn: ServerConnection, @Ctx() ctx: ApiContext): Promise<number> {
    conn.totals ??= countServers(ctx.prisma, conn.where);
    return (await conn.totals).servers;
  }

  @FieldResolver(() => Int, {
    complexity: 10,
    description:
      "Players on the matching servers that are ONLINE now (counted on request, with totalCount).",
  })
  async totalPlayers(@Root() conn: ServerConnection, @Ctx() ctx: ApiContext): Promise<number> {
    conn.totals ??= countServers(ctx.prisma, conn.where);
    return (await conn.totals).players;
  }
}
