/**
 * History series of one server and of aggregates, as chart points. Times are UTC bucket starts. The point
 * types have only plain fields: `simpleResolvers` lets graphql-js read them without a middleware runner
 * per field (a 30-day chart has ~240 points).
 */
import "reflect-metadata";
import { Field, Float, Int, ObjectType } from "type-graphql";
import type { HistoryPlan } from "./history-plan";
import { HistoryResolution } from "./history-resolution";

@ObjectType({ description: "One bucket of a server history.", simpleResolvers: true })
export class HistoryPoint {
  @Field(() => Date, { description: "Start of the bucket (for RAW, the crawl time)." })
  at!: Date;

  @Field(() => Int, { description: "Crawls that sampled the server in the bucket." })
  samples!: number;

  @Field(() => Int, { nullable: true })
  playersMin!: number | null;

  @Field(() => Float, {
    description: "Average players over the samples (offline samples count as 0).",
  })
  playersAvg!: number;

  @Field(() => Int, { nullable: true })
  playersMax!: number | null;

  @Field(() => Int, { nullable: true, description: "Most bots seen in the bucket." })
  bots!: number | null;

  @Field(() => Float, { description: "Share of the samples in which the server answered (0-1)." })
  onlineShare!: number;

  @Field(() => String, { nullable: true, description: "Most-seen map in the bucket." })
  map!: string | null;
}

@ObjectType({ description: "A stretch of time on one map.", simpleResolvers: true })
export class MapSpan {
  @Field(() => String)
  map!: string;

  @Field(() => Date)
  from!: Date;

  @Field(() => Date)
  to!: Date;
}

@ObjectType({ description: "A server's history over a time range." })
export class ServerHistory {
  @Field(() => HistoryResolution, { description: "The resolution used (never AUTO)." })
  resolution!: HistoryResolution;

  @Field(() => Int, {
    description: "Length of one bucket in seconds (0 for RAW: one point per crawl).",
  })
  bucketSeconds!: number;

  @Field(() => Date)
  from!: Date;

  @Field(() => Date)
  to!: Date;

  /** For the points and mapTimeline field resolvers. */
  gameServerId!: number;
  plan!: HistoryPlan;
}

@ObjectType({
  description: "One bucket of an aggregate (a game, a map, a region, everything).",
  simpleResolvers: true,
})
export class PopulationPoint {
  @Field(() => Date)
  at!: Date;

  @Field(() => Float, {
    description:
      "Average over the bucket's moments of the servers online (a moment: see playersPeak).",
  })
  serversOnline!: number;

  @Field(() => Int, {
    description: "Most distinct servers seen in one rollup bucket of the bucket.",
  })
  serversSeen!: number;

  @Field(() => Float, {
    description:
      "Average over the bucket's moments of the total players at each moment; playersMin <= playersAvg <= playersPeak.",
  })
  playersAvg!: number;

  @Field(() => Int, {
    description:
      "Most players at one moment of the bucket, across all sources. A moment is a crawl instant (the start of any source's crawl in the hour); " +
      "at each moment every server counts once, with its latest sample at or before it (docs/storage.md, Population rollups).",
  })
  playersPeak!: number;

  @Field(() => Int, {
    description:
      "Fewest players at one moment of the bucket (same moments as playersPeak); 0 when the key had no server at some moment.",
  })
  playersMin!: number;

  @Field(() => Float)
  botsAvg!: number;
}

@ObjectType({ description: "An aggregate series, from the hourly and daily rollups." })
export class PopulationSeries {
  @Field(() => HistoryResolution)
  resolution!: HistoryResolution;

  @Field(() => Int)
  bucketSeconds!: number;

  @Field(() => Date)
  from!: Date;

  @Field(() => Date)
  to!: Date;

  @Field(() => String, {
    description: "The rollup dimension used: ALL, APP, FOLDER, MAP, REGION, COUNTRY or PROTOCOL.",
  })
  dimension!: string;

  @Field(() => String, { description: "The dimension's value ('' for ALL)." })
  key!: string;

  @Field(() => [PopulationPoint])
  points!: PopulationPoint[];
}
