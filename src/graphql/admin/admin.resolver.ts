/**
 * Mutations, every one behind an API key (RequireApiKey runs before any of them touches anything).
 * Work for the crawler (query a server now, crawl a source now) goes through injected enqueue
 * functions; without them those mutations answer false.
 */
import "reflect-metadata";
import { Arg, Ctx, Int, Mutation, Resolver, UseMiddleware } from "type-graphql";
import { isIP } from "node:net";
import { cancelSourceCrawls } from "../../crawler/queues";
import { Prisma } from "../../generated/prisma/client";
import {
  createAddressPolicy,
  parseBlockedRanges,
  type AddressPolicy,
} from "../../crawler/address-policy";
import { isHostName, refusalText } from "../../crawler/outbound-guard";
import { PROTOCOL_IDS } from "../../protocol";
import { toId } from "../../shared/ids";
import { RequireApiKey } from "../auth";
import { networkText, parseCidr, parseIp } from "../common/ip";
import type { ApiContext } from "../context";
import { BadUserInputError, NotFoundError } from "../errors";
import { toGameServer } from "../game-server/game-server.mapper";
import { GameServer } from "../game-server/game-server.type";
import { toBlockedRange, toMasterSource } from "../source/source.mapper";
import { BlockedRange, MasterSource } from "../source/source.type";
import { AddServerInput, AddSourceInput, UpdateSourceInput } from "./admin.inputs";

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A zone id (fe80::1%lo) names one of this machine's interfaces: never an address to index or contact. */
function noZoneId(name: string, value: string): void {
  if (value.includes("%"))
    throw new BadUserInputError(
      name,
      `'${value}' has a zone id (%...): give the address without it`,
    );
}

/** An IP literal in the canonical text the crawler stores (IPv4-mapped IPv6 as IPv4). */
function ipText(name: string, value: string): string {
  noZoneId(name, value);
  const ip = parseIp(value);
  if (!ip) throw new BadUserInputError(name, `'${value}' is not an IP address`);
  return ip.toString();
}

/** The network itself (203.0.113.0/24, not 203.0.113.7/24), so one range has one spelling. */
function cidrText(name: string, value: string): string {
  noZoneId(name, value);
  const range = parseCidr(value);
  if (!range)
    throw new BadUserInputError(name, `'${value}' is not a CIDR range (e.g. 203.0.113.0/24)`);
  return networkText(range);
}

function port(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new BadUserInputError(name, "must be a port number (1-65535)");
  return n;
}

function regions(name: string, list: number[]): number[] {
  for (const r of list)
    if (!Number.isInteger(r) || r < 0 || r > 255)
      throw new BadUserInputError(name, `${r} is not a region code (0-255)`);
  return list;
}

function intervalMs(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1000 || n > 7 * 24 * 3600 * 1000)
    throw new BadUserInputError(name, "must be between 1000 ms and 7 days");
  return n;
}

function nonEmpty(name: string, s: string, max = 255): string {
  const t = s.trim();
  if (t === "" || t.length > max) throw new BadUserInputError(name, `must be 1-${max} characters`);
  return t;
}

/** The address policy as the crawler applies it at send time: the allow-list and the blocked ranges. */
async function currentPolicy(ctx: ApiContext): Promise<AddressPolicy> {
  const rows = await ctx.prisma.$queryRaw<
    Array<{ cidr: string }>
  >`SELECT cidr::text AS cidr FROM blocked_range`;
  return createAddressPolicy(
    ctx.config.addressAllowList ?? [],
    parseBlockedRanges(rows.map((r) => r.cidr)),
  );
}

/**
 * A source's host: an IP the policy allows, or a host name (resolved by the crawler at each contact, where every
 * address it resolves to is checked: src/crawler/outbound-guard.ts). 'localhost' names are refused here already.
 */
async function sourceHost(ctx: ApiContext, name: string, value: string): Promise<string> {
  const host = nonEmpty(name, value);
  noZoneId(name, host);
  const policy = await currentPolicy(ctx);
  if (isIP(host) !== 0) {
    const verdict = policy.check(host);
    if (!verdict.queryable)
      throw new BadUserInputError(
        name,
        `${host} is ${refusalText(verdict.reason)}: the address policy refuses it (ADDRESS_ALLOW_LIST names ranges that may be contacted)`,
      );
    return host;
  }
  if (!isHostName(host))
    throw new BadUserInputError(name, `'${host}' is neither an IP address nor a host name`);
  const bare = host.toLowerCase().replace(/\.$/, "");
  if ((bare === "localhost" || bare.endsWith(".localhost")) && !policy.check(bare).queryable) {
    throw new BadUserInputError(
      name,
      `${host} is a loopback name: the address policy refuses it (ADDRESS_ALLOW_LIST names hosts that may be contacted)`,
    );
  }
  return host;
}

const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002";
const isNotFound = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2025";

async function orNotFound<T>(what: string, op: Promise<T>): Promise<T> {
  try {
    return await op;
  } catch (err) {
    if (isNotFound(err)) throw new NotFoundError(what);
    throw err;
  }
}

@Resolver()
@UseMiddleware(RequireApiKey)
export class AdminResolver {
  @Mutation(() => GameServer, {
    description:
      "Index a server by address and query port (idempotent) and query it as soon as a worker can.",
  })
  async addServer(
    @Arg("input", () => AddServerInput) input: AddServerInput,
    @Ctx() ctx: ApiContext,
  ): Promise<GameServer> {
    const address = ipText("input.address", input.address);
    const queryPort = port("input.port", input.port);
    const gamePort = input.gamePort == null ? null : port("input.gamePort", input.gamePort);
    if (!(PROTOCOL_IDS as readonly string[]).includes(input.protocol)) {
      throw new BadUserInputError(
        "input.protocol",
        `unknown protocol '${input.protocol}' (known: ${PROTOCOL_IDS.join(", ")})`,
      );
    }
    // The answer says what the crawler will do: an address the policy refuses is indexed but never queried.
    const verdict = (await currentPolicy(ctx)).check(address);
    const row = await ctx.prisma.gameServer.upsert({
      where: { address_queryPort: { address, queryPort } },
      create: {
        address,
        ip: address,
        queryPort,
        gamePort,
        protocol: input.protocol,
        notQueryable: !verdict.queryable,
        isRelay: verdict.reason === "relay",
      },
      update: verdict.queryable ? {} : { notQueryable: true },
    });
    if (verdict.queryable) await ctx.enqueue.query?.(toId(row.id));
    return toGameServer(row);
  }

  @Mutation(() => Boolean, { description: "Delete a server and its history." })
  async removeServer(@Arg("id", () => Int) id: number, @Ctx() ctx: ApiContext): Promise<boolean> {
    await orNotFound(`game server ${id}`, ctx.prisma.gameServer.delete({ where: { id } }));
    return true;
  }

  @Mutation(() => Boolean, {
    description: "Query a server now. false when this API process has no queue to hand it to.",
  })
  async requeryServer(@Arg("id", () => Int) id: number, @Ctx() ctx: ApiContext): Promise<boolean> {
    const row = await ctx.prisma.gameServer.findUnique({ where: { id }, select: { id: true } });
    if (!row) throw new NotFoundError(`game server ${id}`);
    if (!ctx.enqueue.query) return false;
    await ctx.enqueue.query(id);
    return true;
  }

  @Mutation(() => GameServer, {
    description: "Hide a server from lists and aggregates (or show it again).",
  })
  async setServerHidden(
    @Arg("id", () => Int) id: number,
    @Arg("hidden", () => Boolean) hidden: boolean,
    @Ctx() ctx: ApiContext,
  ): Promise<GameServer> {
    return toGameServer(
      await orNotFound(
        `game server ${id}`,
        ctx.prisma.gameServer.update({ where: { id }, data: { hidden } }),
      ),
    );
  }

  @Mutation(() => GameServer, { description: "Clear the suspected-fake flag of a server." })
  async clearFakeFlag(
    @Arg("id", () => Int) id: number,
    @Ctx() ctx: ApiContext,
  ): Promise<GameServer> {
    return toGameServer(
      await orNotFound(
        `game server ${id}`,
        ctx.prisma.gameServer.update({
          where: { id },
          data: { suspectedFake: false, fakeReasons: [] },
        }),
      ),
    );
  }

  @Mutation(() => MasterSource)
  async addSource(
    @Arg("input", () => AddSourceInput) input: AddSourceInput,
    @Ctx() ctx: ApiContext,
  ): Promise<MasterSource> {
    if (!SLUG.test(input.name))
      throw new BadUserInputError(
        "input.name",
        "a slug: lower-case letters, digits and dashes, at most 63",
      );
    // The index is one built-in source (QUERY_FROM_INDEX): a second one would query every server twice.
    if (input.kind === "INDEX")
      throw new BadUserInputError(
        "input.kind",
        "INDEX is the built-in source `index`, kept by the scheduler (QUERY_FROM_INDEX); it cannot be added",
      );
    const data = {
      name: input.name,
      kind: input.kind,
      host: await sourceHost(ctx, "input.host", input.host),
      port: input.port == null ? null : port("input.port", input.port),
      filter: input.filter ?? "",
      regions: regions("input.regions", input.regions ?? []),
      intervalMs:
        input.intervalMs == null
          ? ctx.config.crawlIntervalMs
          : intervalMs("input.intervalMs", input.intervalMs),
      enabled: input.enabled ?? true,
    };
    if (data.filter.length > 500)
      throw new BadUserInputError("input.filter", "longer than 500 characters");
    try {
      return toMasterSource(await ctx.prisma.masterSource.create({ data }));
    } catch (err) {
      if (isUniqueViolation(err))
        throw new BadUserInputError("input.name", `a source named '${input.name}' exists`);
      throw err;
    }
  }

  @Mutation(() => MasterSource)
  async updateSource(
    @Arg("id", () => Int) id: number,
    @Arg("input", () => UpdateSourceInput) input: UpdateSourceInput,
    @Ctx() ctx: ApiContext,
  ): Promise<MasterSource> {
    const data: Prisma.MasterSourceUpdateInput = {};
    if (input.host != null) data.host = await sourceHost(ctx, "input.host", input.host);
    if (input.port !== undefined)
      data.port = input.port === null ? null : port("input.port", input.port);
    if (input.filter != null) {
      if (input.filter.length > 500)
        throw new BadUserInputError("input.filter", "longer than 500 characters");
      data.filter = input.filter;
    }
    if (input.regions != null) data.regions = regions("input.regions", input.regions);
    if (input.intervalMs != null)
      data.intervalMs = intervalMs("input.intervalMs", input.intervalMs);
    if (input.enabled != null) data.enabled = input.enabled;
    const row = await orNotFound(
      `source ${id}`,
      ctx.prisma.masterSource.update({ where: { id }, data }),
    );
    // Disabled: its crawls stop now and nothing more is sent to it (not at the scheduler's next re-sync).
    if (input.enabled === false)
      await ctx.enqueue.cancelSource?.(
        await cancelSourceCrawls(ctx.prisma, row, "cancelled: its source was disabled"),
      );
    return toMasterSource(row);
  }

  @Mutation(() => Boolean, {
    description: "Delete a source and its crawls; its servers stay indexed.",
  })
  async removeSource(@Arg("id", () => Int) id: number, @Ctx() ctx: ApiContext): Promise<boolean> {
    const source = await ctx.prisma.masterSource.findUnique({
      where: { id },
      select: { id: true, name: true },
    });
    if (!source) throw new NotFoundError(`source ${id}`);
    // Closed before the rows go, so its running jobs stop whether they see the crawl closed or gone.
    const cancelled = await cancelSourceCrawls(
      ctx.prisma,
      source,
      "cancelled: its source was removed",
    );
    await orNotFound(`source ${id}`, ctx.prisma.masterSource.delete({ where: { id } }));
    await ctx.enqueue.cancelSource?.(cancelled);
    return true;
  }

  @Mutation(() => Boolean, {
    description: "Crawl a source now. false when this API process has no queue to hand it to.",
  })
  async triggerCrawl(
    @Arg("sourceId", () => Int) sourceId: number,
    @Ctx() ctx: ApiContext,
  ): Promise<boolean> {
    const row = await ctx.prisma.masterSource.findUnique({
      where: { id: sourceId },
      select: { id: true },
    });
    if (!row) throw new NotFoundError(`source ${sourceId}`);
    if (!ctx.enqueue.crawl) return false;
    await ctx.enqueue.crawl(sourceId);
    return true;
  }

  @Mutation(() => BlockedRange, {
    description: "Never query addresses in this CIDR range again (idempotent).",
  })
  async blockRange(
    @Arg("cidr", () => String) cidr: string,
    @Ctx() ctx: ApiContext,
    @Arg("reason", () => String, { nullable: true }) reason?: string | null,
  ): Promise<BlockedRange> {
    const text = cidrText("cidr", cidr);
    // inet columns go through SQL: Prisma treats them as text, and the unique key is on the inet value.
    const rows = await ctx.prisma.$queryRaw<Array<{ id: number }>>`
      INSERT INTO blocked_range (cidr, reason) VALUES (${text}::inet, ${reason ?? null})
      ON CONFLICT (cidr) DO UPDATE SET reason = COALESCE(EXCLUDED.reason, blocked_range.reason)
      RETURNING id`;
    const row = await ctx.prisma.blockedRange.findUniqueOrThrow({
      where: { id: rows[0]?.id ?? -1 },
    });
    return toBlockedRange(row);
  }

  @Mutation(() => Boolean, {
    description: "Allow a blocked range again. false when it was not blocked.",
  })
  async unblockRange(
    @Arg("cidr", () => String) cidr: string,
    @Ctx() ctx: ApiContext,
  ): Promise<boolean> {
    const text = cidrText("cidr", cidr);
    const n = await ctx.prisma.$executeRaw`DELETE FROM blocked_range WHERE cidr = ${text}::inet`;
    return n > 0;
  }

  @Mutation(() => Int, {
    description:
      "Delete DELISTED servers not listed since before this time, with their history. Returns how many.",
  })
  async purgeDelisted(
    @Arg("olderThan", () => Date) olderThan: Date,
    @Ctx() ctx: ApiContext,
  ): Promise<number> {
    if (Number.isNaN(olderThan.getTime()) || olderThan.getTime() > ctx.now.getTime())
      throw new BadUserInputError("olderThan", "must be a time in the past");
    return ctx.prisma.$executeRaw`
      DELETE FROM game_server WHERE status = 'DELISTED' AND COALESCE(last_listed_at, first_seen_at) < ${olderThan}::timestamptz`;
  }
}
