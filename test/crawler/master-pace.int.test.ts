/**
 * Concurrent listings of one Valve master share its pace (src/crawler/master-pace.ts): five regions listed at
 * once, as a worker's crawl queue (concurrency 4) and a second worker would, through two list-source
 * factories standing for two worker processes, against the simulated master at its real rate limit (30
 * packets a minute per client, then a minute of silence), each listing at 25 requests a minute. 35 requests
 * in all: paced per listing they went out five times as fast, the master fell silent after 30 and the
 * listings were cut short. Shared, every request is answered and every region listed to its end. Once with
 * the pace on Redis, once on PostgreSQL (QUEUE_BACKEND=postgres), side by side against two masters; on a
 * machine without Redis (test/helpers/queue-backend.ts) the PostgreSQL half runs alone.
 */
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import type { ListingResult, SourceRecord } from "../../src/crawler/list-source";
import {
  createPostgresPacer,
  createRedisPacer,
  type MasterPacer,
} from "../../src/crawler/master-pace";
import { createListSourceFactory } from "../../src/crawler/sources";
import { loadConfig } from "../../src/shared/config";
import {
  REAL_MASTER_RATE_LIMIT,
  startSimValveMaster,
  type SimValveMaster,
} from "../../src/simulator/master";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { makeListTestFleet } from "../helpers/master-fleet";
import { testRedisUrl } from "../helpers/queue-backend";
import { dropRedisPrefix } from "../helpers/redis";

jest.setTimeout(300_000);

const REGIONS = [0, 1, 2, 3, 4];
// 20 servers a region at 3 addresses a packet: 7 pages a region, 35 requests, more than the master's 30 a minute.
const fleet = makeListTestFleet(9 * 20);
const ADDRESSES_PER_PACKET = 3;
// Under the master's 30 with room for a loaded machine sending one request late and the next on time.
const REQUESTS_PER_MINUTE = 25;

const config = loadConfig({
  ADDRESS_ALLOW_LIST: "127.0.0.0/8",
  // Longer than a paced wait for the master's answer, shorter than its minute of silence.
  MASTER_TIMEOUT_MS: "5000",
  MIGRATE_ON_START: "0",
});

async function listAtOnce(
  master: SimValveMaster,
  pacers: readonly [MasterPacer, MasterPacer],
): Promise<ListingResult[]> {
  const source: SourceRecord = {
    id: 1,
    name: "real-pace",
    kind: "VALVE_UDP",
    host: master.address.host,
    port: master.address.port,
    filter: "",
    regions: REGIONS,
    intervalMs: 300_000,
    enabled: true,
    options: { requestsPerMinute: REQUESTS_PER_MINUTE },
  };
  // Two worker processes, each with its own factory over its own connection to the shared pace.
  const workers = pacers.map((masterPacer) =>
    createListSourceFactory(config, {}, { masterPacer })(source),
  );
  const splits = workers[0]!.splits();
  return Promise.all(
    splits.map((split, i) => workers[i % 2]!.list(split, new AbortController().signal)),
  );
}

function expectEverythingListed(master: SimValveMaster, results: ListingResult[]): void {
  expect({ refused: master.stats.rateLimited, errors: results.map((r) => r.error ?? "") }).toEqual({
    refused: 0,
    errors: results.map(() => ""),
  });
  for (const r of results) {
    expect(r.partial).toBe(false);
  }
  const listed = results.flatMap((r) => r.servers.map((s) => `${s.host}:${s.queryPort}`)).sort();
  const expected = fleet
    .filter((s) => REGIONS.includes(s.region))
    .map((s) => `${s.host}:${s.queryPort}`)
    .sort();
  expect(listed).toEqual(expected);
  expect(master.stats.requests).toBeGreaterThan(REAL_MASTER_RATE_LIMIT.packetsPerWindow);
}

describe("one pace per master across concurrent listings and worker processes", () => {
  let t: TestDatabase;
  const masters: SimValveMaster[] = [];
  const redis: IORedis[] = [];
  const prefix = `gsindex-test-${randomBytes(4).toString("hex")}`;
  const storeErrors: string[] = [];

  beforeAll(async () => {
    t = await createTestDatabase();
    for (let i = 0; i < 2; i++)
      masters.push(
        await startSimValveMaster({
          fleet,
          addressesPerPacket: ADDRESSES_PER_PACKET,
          rateLimit: REAL_MASTER_RATE_LIMIT,
          restIsWorld: false,
        }),
      );
    const redisUrl = testRedisUrl;
    if (redisUrl !== null)
      for (let i = 0; i < 2; i++) redis.push(new IORedis(redisUrl, { maxRetriesPerRequest: 1 }));
  });

  afterAll(async () => {
    for (const m of masters) await m.close();
    for (const r of redis) r.disconnect();
    await dropRedisPrefix(prefix);
    await t?.drop();
  });

  it("lists every region to its end without a refused request, on Redis and on PostgreSQL", async () => {
    // A reservation the store did not answer in time is paced by its process alone: told, not failed.
    const fail = (err: unknown) => void storeErrors.push(String(err));
    const onRedis = redis.map((r) => createRedisPacer(r, `${prefix}:master-pace:`, fail)) as [
      MasterPacer,
      MasterPacer,
    ];
    const onPostgres = [0, 1].map(() => createPostgresPacer(t.db, `${prefix}_queue`, fail)) as [
      MasterPacer,
      MasterPacer,
    ];
    if (redis.length === 0) console.log('skipped "the pace on Redis": no Redis for the tests');
    const [viaPostgres, viaRedis] = await Promise.all([
      listAtOnce(masters[1]!, onPostgres),
      redis.length > 0 ? listAtOnce(masters[0]!, onRedis) : null,
    ]);
    expectEverythingListed(masters[1]!, viaPostgres);
    if (viaRedis !== null) expectEverythingListed(masters[0]!, viaRedis);
    // Errors (not timeouts) would mean the shared pace was never used.
    expect(storeErrors.filter((e) => !e.includes("no answer"))).toEqual([]);
  });
});
