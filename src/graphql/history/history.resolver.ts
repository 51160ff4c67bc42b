/** ServerHistory's series (through the loaders: one statement per page, not per server) and Query.population. */
import "reflect-metadata";
import {
  Arg,
  Ctx,
  FieldResolver,
  InputType,
  Field,
  Int,
  Query,
  Resolver,
  Root,
} from "type-graphql";
import type { ApiContext } from "../context";
import { BadUserInputError } from "../errors";
import { historySettings } from "../game-server/game-server.resolver";
import {
  readPopulation,
  readPopulationBuckets,
  type PopulationDimensionName as PopulationDimension,
} from "../../history/population";
import { mapTimeline } from "../../history/server-history";
import { sampleIntervalMs } from "../../shared/config";
import {
  rebucketHistory,
  rebucketPopulation,
  toApiPoint,
  toApiPopulationPoint,
} from "./history-buckets";
import { nativeStepMs, planHistory } from "./history-plan";
import { HistoryResolution } from "./history-resolution";
import { HistoryPoint, MapSpan, PopulationSeries, ServerHistory } from "./history.type";

@Resolver(() => ServerHistory)
export class ServerHistoryResolver {
  @FieldResolver(() => [HistoryPoint], { complexity: 10 })
  async points(@Root() history: ServerHistory, @Ctx() ctx: ApiContext): Promise<HistoryPoint[]> {
    const key = { gameServerId: history.gameServerId, plan: history.plan };
    const nativeMs = nativeStepMs(history.plan, sampleIntervalMs(ctx.config));
    // Buckets wider than the stored slot are merged by PostgreSQL: a 30-day chart reads ~240 rows, not 720 slots.
    if (history.plan.bucketMs > nativeMs)
      return (await ctx.loaders.historyBuckets.load(key)).map(toApiPoint);
    return rebucketHistory(await ctx.loaders.history.load(key), history.plan.bucketMs, nativeMs);
  }

  @FieldResolver(() => [MapSpan], {
    complexity: 10,
    description:
      "Maps played over the range, oldest first: consecutive points on one map merged (as fine as the resolution read).",
  })
  async mapTimeline(@Root() history: ServerHistory, @Ctx() ctx: ApiContext): Promise<MapSpan[]> {
    // Same loader key as `points`: asking for both reads the history once.
    const native = await ctx.loaders.history.load({
      gameServerId: history.gameServerId,
      plan: history.plan,
    });
    return mapTimeline(native, nativeStepMs(history.plan, sampleIntervalMs(ctx.config))).map((s) =>
      Object.assign(new MapSpan(), s),
    );
  }
}

@InputType({ description: "Which aggregate: give at most one field (none = every server)." })
export class PopulationFilterInput {
  @Field(() => Int, { nullable: true })
  appId?: number | null;

  @Field(() => String, { nullable: true, description: "Game directory." })
  folder?: string | null;

  @Field(() => String, { nullable: true })
  map?: string | null;

  @Field(() => Int, { nullable: true, description: "Valve region code." })
  region?: number | null;

  @Field(() => String, { nullable: true, description: "ISO country code." })
  country?: string | null;

  @Field(() => String, { nullable: true })
  protocol?: string | null;
}

function toDimension(filter: PopulationFilterInput | null | undefined): {
  dimension: PopulationDimension;
  key: string;
} {
  const given: Array<{ dimension: PopulationDimension; key: string; name: string }> = [];
  if (filter?.appId != null)
    given.push({ dimension: "APP", key: String(filter.appId), name: "appId" });
  if (filter?.folder != null)
    given.push({ dimension: "FOLDER", key: filter.folder, name: "folder" });
  if (filter?.map != null) given.push({ dimension: "MAP", key: filter.map, name: "map" });
  if (filter?.region != null)
    given.push({ dimension: "REGION", key: String(filter.region), name: "region" });
  if (filter?.country != null)
    given.push({ dimension: "COUNTRY", key: filter.country.toUpperCase(), name: "country" });
  if (filter?.protocol != null)
    given.push({ dimension: "PROTOCOL", key: filter.protocol, name: "protocol" });
  if (given.length > 1)
    throw new BadUserInputError(
      `filter.${given[1]?.name ?? ""}`,
      "give one dimension at a time (population is rolled up per game, map, region, country or protocol)",
    );
  return given[0] ?? { dimension: "ALL", key: "" };
}

@Resolver()
export class PopulationResolver {
  @Query(() => PopulationSeries, {
    complexity: 10,
    description:
      "Aggregate series behind a game's, a map's or a region's chart, from the hourly and daily rollups (relays and hidden servers left out; suspected fakes too unless excludeSuspectedFakes is false).",
  })
  async population(
    @Ctx() ctx: ApiContext,
    @Arg("filter", () => PopulationFilterInput, { nullable: true })
    filter?: PopulationFilterInput | null,
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
    @Arg("excludeSuspectedFakes", () => Boolean, {
      defaultValue: true,
      description: "Leave out suspected fakes (docs/fake-players.md); false counts them too.",
    })
    excludeSuspectedFakes = true,
  ): Promise<PopulationSeries> {
    const { dimension, key } = toDimension(filter);
    const plan = planHistory({ from, to, lastDays, resolution }, historySettings(ctx), false);
    const read = {
      from: plan.from,
      to: plan.to,
      resolution: plan.resolution,
      withSuspectedFakes: !excludeSuspectedFakes,
    };
    const nativeMs = nativeStepMs(plan, sampleIntervalMs(ctx.config));
    const points =
      plan.bucketMs > nativeMs
        ? (
            await readPopulationBuckets(
              ctx.prisma,
              { dimension, key },
              { ...read, bucketMs: plan.bucketMs },
            )
          ).map(toApiPopulationPoint)
        : rebucketPopulation(
            await readPopulation(ctx.prisma, { dimension, key }, read),
            plan.bucketMs,
            nativeMs,
          );
    return Object.assign(new PopulationSeries(), {
      resolution: plan.resolution,
      bucketSeconds: plan.bucketMs / 1000,
      from: plan.from,
      to: plan.to,
      dimension,
      key,
      points,
    });
  }
}
