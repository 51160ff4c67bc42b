/** List sources (master servers, the Steam Web API, management servers) and their crawls. */
import "reflect-metadata";
import { Field, Float, Int, ObjectType, registerEnumType } from "type-graphql";

export enum MasterSourceKind {
  VALVE_UDP = "VALVE_UDP",
  STEAM_WEB_API = "STEAM_WEB_API",
  MANAGEMENT = "MANAGEMENT",
  ADDRESS_LIST = "ADDRESS_LIST",
  /** The built-in `index` source (QUERY_FROM_INDEX): its crawls query every known server. */
  INDEX = "INDEX",
}
registerEnumType(MasterSourceKind, { name: "MasterSourceKind" });

export enum ListingTruncation {
  CAPPED = "CAPPED",
  CUT_SHORT = "CUT_SHORT",
  RESUMED = "RESUMED",
}
registerEnumType(ListingTruncation, {
  name: "ListingTruncation",
  description: "Why a listing did not cover its whole region or query split.",
  valuesConfig: {
    CAPPED: {
      description:
        "A part of the query still returned the source's per-call cap and could not be split further (Steam Web API): servers beyond the cap were not listed.",
    },
    CUT_SHORT: {
      description:
        "The listing stopped before its end: rate limit, timeout, an unreachable source or an error (see `error`).",
    },
    RESUMED: {
      description:
        "It began where an earlier crawl's listing of the split stopped: the pages before were not listed in this crawl.",
    },
  },
});

export enum SharedNamesCheck {
  CHECKED = "CHECKED",
  OVER_BUDGET = "OVER_BUDGET",
  FAILED = "FAILED",
  SKIPPED = "SKIPPED",
}
registerEnumType(SharedNamesCheck, {
  name: "SharedNamesCheck",
  description:
    "The shared-player-names rule at a crawl's close: whether the SHARED_PLAYER_NAMES flags were brought up to date.",
  valuesConfig: {
    CHECKED: { description: "The rule ran: the flags are up to date as of this close." },
    OVER_BUDGET: {
      description:
        "Cancelled at its time budget, or failed after it had run out: the flags stay as the last CHECKED close left them.",
    },
    FAILED: {
      description: "The database failed it within its budget: the flags stay as they were.",
    },
    SKIPPED: {
      description:
        "Not run: backing off after closes where it went over budget (the pool is too large for it). The flags stay as they were.",
    },
  },
});

@ObjectType({ description: "The listing of one region or query split within a crawl." })
export class CrawlRun {
  @Field(() => Int, { description: "Valve region code, or -1 when the source has no regions." })
  region!: number;

  @Field(() => String, { description: "Query split (Steam Web API), '' when none." })
  split!: string;

  @Field(() => Date)
  startedAt!: Date;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => Int)
  found!: number;

  @Field(() => Int)
  answered!: number;

  @Field(() => Int)
  failed!: number;

  @Field(() => Boolean, { description: "The listing stopped short (rate limit, cap, timeout)." })
  partial!: boolean;

  @Field(() => ListingTruncation, {
    nullable: true,
    description: "Why the listing did not cover its split; null when it did.",
  })
  truncation!: ListingTruncation | null;

  @Field(() => Int, {
    description:
      "Parts of the query still at the source's per-call cap (Steam Web API); 0 elsewhere.",
  })
  cappedParts!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;
}

@ObjectType({
  description:
    "One crawl of one list source, with what it covered: of `listed` servers, `queried` were asked (`answered` + `failed`, of which " +
    "`timedOut`), `refused` were kept from being queried by the address policy, and management registrations count as answered " +
    'without a query. A stats site shows "data as of `dataAsOf`, coverage `coverage`" and says when listings were truncated.',
})
export class Crawl {
  @Field(() => Int)
  id!: number;

  @Field(() => Int)
  sourceId!: number;

  @Field(() => Date, {
    description:
      "When the crawl began (its listing runs start then; history samples are filed under it).",
  })
  startedAt!: Date;

  @Field(() => Date, {
    nullable: true,
    description: "When it was closed: every listing run and query batch done (or given up).",
  })
  finishedAt!: Date | null;

  @Field(() => Int, {
    description:
      "Distinct servers the source listed in this crawl (a server under several of its splits counts once).",
  })
  listed!: number;

  @Field(() => Int, {
    description: "Addresses the source listed.",
    deprecationReason: "Use listed (the same number).",
  })
  found!: number;

  @Field(() => Int, { description: "Servers queried in this crawl: answered + failed." })
  queried!: number;

  @Field(() => Int, {
    description:
      "Servers that answered their query, plus management registrations (their state is what they reported).",
  })
  answered!: number;

  @Field(() => Int, {
    description:
      "Queries that failed (no answer in time, refused connection, unreadable answer, cancelled).",
  })
  failed!: number;

  @Field(() => Int, {
    description:
      "Of failed: queries that got no answer before their deadline (dead or unreachable servers).",
  })
  timedOut!: number;

  @Field(() => Int, {
    description:
      "Listed servers the address policy kept from being queried: private, reserved or blocked ranges, relays, unresolved host names.",
  })
  refused!: number;

  @Field(() => Int, { description: "Servers whose state was written." })
  written!: number;

  @Field(() => Float, {
    nullable: true,
    description:
      "answered / listed (0-1): the share of listed servers whose numbers come from this crawl; null when nothing was listed.",
  })
  coverage!: number | null;

  @Field(() => Date, {
    nullable: true,
    description: "When its last listing run finished; null while listing.",
  })
  listedAt!: Date | null;

  @Field(() => Int, {
    nullable: true,
    description: "Listing time: from startedAt to listedAt, in milliseconds.",
  })
  listingMs!: number | null;

  @Field(() => Date, {
    nullable: true,
    description: "When its first query batch started; null when nothing was queried.",
  })
  queryStartedAt!: Date | null;

  @Field(() => Date, {
    nullable: true,
    description: 'When its last query batch was written: the time its data is "as of".',
  })
  queriedAt!: Date | null;

  @Field(() => Int, {
    nullable: true,
    description:
      "Query time: from queryStartedAt to queriedAt, in milliseconds (queries start as the first listing run ends).",
  })
  queryMs!: number | null;

  @Field(() => Date, {
    nullable: true,
    description:
      "When its numbers are from: queriedAt, or listedAt when nothing was queried (a management server reports its servers at listing).",
  })
  dataAsOf!: Date | null;

  @Field(() => Boolean, {
    description: "A listing stopped short: absences in this crawl do not count towards DELISTED.",
  })
  partial!: boolean;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => SharedNamesCheck, {
    nullable: true,
    description:
      "The shared-player-names rule at its close; null while open, when the rule is switched off, or for crawls closed before this was recorded.",
  })
  sharedNamesCheck!: SharedNamesCheck | null;
}

@ObjectType({ description: "A list source: something that yields game-server addresses." })
export class MasterSource {
  @Field(() => Int)
  id!: number;

  @Field(() => String, { description: "Stable slug." })
  name!: string;

  @Field(() => MasterSourceKind)
  kind!: MasterSourceKind;

  @Field(() => String)
  host!: string;

  @Field(() => Int, { nullable: true })
  port!: number | null;

  @Field(() => String, { description: "Master filter string, e.g. \\appid\\730\\empty\\1." })
  filter!: string;

  @Field(() => [Int], { description: "Valve region codes listed; empty = the kind's default." })
  regions!: number[];

  @Field(() => Int)
  intervalMs!: number;

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType({ description: "A CIDR range that is never queried." })
export class BlockedRange {
  @Field(() => Int)
  id!: number;

  @Field(() => String)
  cidr!: string;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => Date)
  createdAt!: Date;
}
