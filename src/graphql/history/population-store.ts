/** Aggregate series from population_rollup (hourly and daily rows per dimension and key). */
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../../shared/db';
import type { HistoryPlan } from './history-plan';
import { HistoryResolution, PopulationPoint } from './history.type';

export type PopulationDimension = 'ALL' | 'APP' | 'FOLDER' | 'MAP' | 'REGION' | 'COUNTRY' | 'PROTOCOL';

const ORIGIN = Prisma.raw("TIMESTAMPTZ '2000-01-01 00:00:00+00'");

export async function loadPopulation(db: Db, dimension: PopulationDimension, key: string, plan: HistoryPlan): Promise<PopulationPoint[]> {
  const rollup = plan.resolution === HistoryResolution.DAY ? 'DAY' : 'HOUR';
  const rows = await db.$queryRaw<Array<{ at: Date; so: number; ss: number; pa: number; pp: number; ba: number }>>`
    SELECT date_bin(${`${plan.bucketMs / 1000} seconds`}::interval, r.bucket_at, ${ORIGIN}) AS at,
           avg(r.servers_online)::float8 AS so, max(r.servers_seen)::int AS ss, avg(r.players_avg)::float8 AS pa,
           max(r.players_peak)::int AS pp, avg(r.bots_avg)::float8 AS ba
    FROM population_rollup r
    WHERE r.resolution = ${rollup}::"RollupResolution" AND r.dimension = ${dimension}::"PopulationDimension" AND r.key = ${key}
      AND r.bucket_at >= ${plan.from}::timestamptz AND r.bucket_at < ${plan.to}::timestamptz
    GROUP BY 1 ORDER BY 1`;
  return rows.map((r) =>
    Object.assign(new PopulationPoint(), { at: r.at, serversOnline: r.so, serversSeen: r.ss, playersAvg: r.pa, playersPeak: r.pp, botsAvg: r.ba }),
  );
}
