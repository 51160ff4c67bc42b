/** List sources (master servers, the Steam Web API, management servers) and their crawls. */
import 'reflect-metadata';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum MasterSourceKind {
  VALVE_UDP = 'VALVE_UDP',
  STEAM_WEB_API = 'STEAM_WEB_API',
  MANAGEMENT = 'MANAGEMENT',
  ADDRESS_LIST = 'ADDRESS_LIST',
}
registerEnumType(MasterSourceKind, { name: 'MasterSourceKind' });

@ObjectType({ description: 'The listing of one region or query split within a crawl.' })
export class CrawlRun {
  @Field(() => Int, { description: 'Valve region code, or -1 when the source has no regions.' })
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

  @Field(() => Boolean, { description: 'The listing stopped short (rate limit, cap, timeout).' })
  partial!: boolean;

  @Field(() => String, { nullable: true })
  error!: string | null;
}

@ObjectType({ description: 'One crawl of one list source.' })
export class Crawl {
  @Field(() => Int)
  id!: number;

  @Field(() => Int)
  sourceId!: number;

  @Field(() => Date)
  startedAt!: Date;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => Int, { description: 'Addresses the source listed.' })
  found!: number;

  @Field(() => Int)
  queried!: number;

  @Field(() => Int)
  answered!: number;

  @Field(() => Int, { description: 'Queries that failed.' })
  failed!: number;

  @Field(() => Int, { description: 'Servers whose state was written.' })
  written!: number;

  @Field(() => Boolean, { description: 'A listing stopped short: absences in this crawl do not count towards DELISTED.' })
  partial!: boolean;

  @Field(() => String, { nullable: true })
  error!: string | null;
}

@ObjectType({ description: 'A list source: something that yields game-server addresses.' })
export class MasterSource {
  @Field(() => Int)
  id!: number;

  @Field(() => String, { description: 'Stable slug.' })
  name!: string;

  @Field(() => MasterSourceKind)
  kind!: MasterSourceKind;

  @Field(() => String)
  host!: string;

  @Field(() => Int, { nullable: true })
  port!: number | null;

  @Field(() => String, { description: 'Master filter string, e.g. \\appid\\730\\empty\\1.' })
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

@ObjectType({ description: 'A CIDR range that is never queried.' })
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
