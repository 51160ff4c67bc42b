/** Query.sources and Query.crawls, and the crawl lists hanging off a source (batched by loaders). */
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Query, Resolver, Root } from "type-graphql";
import type { ApiContext } from "../context";
import { BadUserInputError } from "../errors";
import { toBlockedRange, toCrawl, toCrawlRun, toMasterSource } from "./source.mapper";
import { BlockedRange, Crawl, CrawlRun, MasterSource } from "./source.type";

const MAX_CRAWLS = 100;

function crawlCount(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_CRAWLS)
    throw new BadUserInputError("first", `must be between 1 and ${MAX_CRAWLS}`);
  return n;
}

@Resolver(() => MasterSource)
export class SourceResolver {
  @Query(() => [MasterSource], { description: "Every list source." })
  async sources(@Ctx() ctx: ApiContext): Promise<MasterSource[]> {
    const rows = await ctx.prisma.masterSource.findMany({ orderBy: { id: "asc" } });
    return rows.map(toMasterSource);
  }

  @Query(() => [BlockedRange], { description: "CIDR ranges that are never queried." })
  async blockedRanges(@Ctx() ctx: ApiContext): Promise<BlockedRange[]> {
    const rows = await ctx.prisma.blockedRange.findMany({ orderBy: { id: "asc" } });
    return rows.map(toBlockedRange);
  }

  @FieldResolver(() => [Crawl], { description: "Its latest crawls, newest first." })
  async crawls(
    @Root() source: MasterSource,
    @Ctx() ctx: ApiContext,
    @Arg("first", () => Int, { defaultValue: 5 }) first: number,
  ): Promise<Crawl[]> {
    const rows = await ctx.loaders.crawlsBySource.load(`${source.id}:${crawlCount(first)}`);
    return rows.map(toCrawl);
  }
}

@Resolver(() => Crawl)
export class CrawlResolver {
  @Query(() => [Crawl], {
    description: "Latest crawls, newest first; of one source when sourceId is given.",
  })
  async crawls(
    @Ctx() ctx: ApiContext,
    @Arg("sourceId", () => Int, { nullable: true }) sourceId?: number | null,
    @Arg("first", () => Int, { defaultValue: 20 }) first = 20,
  ): Promise<Crawl[]> {
    const rows = await ctx.prisma.crawl.findMany({
      where: sourceId != null ? { sourceId } : {},
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
      take: crawlCount(first),
    });
    return rows.map(toCrawl);
  }

  @FieldResolver(() => MasterSource, { nullable: true })
  async source(@Root() crawl: Crawl, @Ctx() ctx: ApiContext): Promise<MasterSource | null> {
    const row = await ctx.loaders.source.load(crawl.sourceId);
    return row ? toMasterSource(row) : null;
  }

  @FieldResolver(() => [CrawlRun], { description: "Per region / query split." })
  async runs(@Root() crawl: Crawl, @Ctx() ctx: ApiContext): Promise<CrawlRun[]> {
    const rows = await ctx.loaders.runsByCrawl.load(crawl.id);
    return rows.map(toCrawlRun);
  }

  @FieldResolver(() => Int, { description: "Listing runs (regions / query splits) of the crawl." })
  async listings(@Root() crawl: Crawl, @Ctx() ctx: ApiContext): Promise<number> {
    return (await ctx.loaders.runsByCrawl.load(crawl.id)).length;
  }

  @FieldResolver(() => Int, {
    description:
      "Listing runs that did not cover their split (any truncation: capped, cut short or resumed).",
  })
  async truncatedListings(@Root() crawl: Crawl, @Ctx() ctx: ApiContext): Promise<number> {
    return (await ctx.loaders.runsByCrawl.load(crawl.id)).filter((r) => r.truncation !== null)
      .length;
  }

  @FieldResolver(() => Int, {
    description:
      "Of truncatedListings: those with a part still at the source's per-call cap (Steam Web API).",
  })
  async cappedListings(@Root() crawl: Crawl, @Ctx() ctx: ApiContext): Promise<number> {
    return (await ctx.loaders.runsByCrawl.load(crawl.id)).filter((r) => r.truncation === "CAPPED")
      .length;
  }
}
