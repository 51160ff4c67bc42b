/** requeryServer (the API's requeryServer job): state and life cycle of one server now, no sample. */
import { requeryServer, type JobSink } from "../../src/crawler/crawl-jobs";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startFleet, type RunningFleet } from "../../src/simulator/fleet";
import { makeFleet } from "../../src/simulator/make-fleet";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const noSink: JobSink = {
  listRuns: () => Promise.resolve(),
  queryBatches: () => Promise.resolve(),
  finishCrawl: () => Promise.resolve(),
};

describe("requeryServer", () => {
  let t: TestDatabase;
  let fleet: RunningFleet;
  beforeAll(async () => {
    t = await createTestDatabase();
    fleet = await startFleet(
      makeFleet({
        count: 1,
        seed: 3,
        basePort: 0,
        mix: { silent: 0, malformed: 0, lossy: 0, slow: 0 },
      }),
    );
  });
  afterAll(async () => {
    await fleet?.stop();
    await t?.drop();
  });

  it("queries an allowed server, and only flags one the policy refuses", async () => {
    const spec = fleet.specs[0]!;
    const deps = buildCrawlDeps({
      config: loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8", QUERY_TIMEOUT_MS: "1000" }),
      db: t.db,
      logger: silentLogger,
      sink: noSink,
    });
    const live = await t.db.gameServer.create({
      data: { address: spec.host, queryPort: spec.queryPort },
    });
    await requeryServer(deps, { serverId: Number(live.id) });
    expect(await t.db.gameServer.findUniqueOrThrow({ where: { id: live.id } })).toMatchObject({
      status: "ONLINE",
      name: spec.state.name,
    });
    expect(await t.db.serverSample.count()).toBe(0);

    const strict = buildCrawlDeps({
      config: loadConfig({}),
      db: t.db,
      logger: silentLogger,
      sink: noSink,
    });
    const other = await t.db.gameServer.create({ data: { address: "127.0.0.1", queryPort: 9 } });
    await requeryServer(strict, { serverId: Number(other.id) });
    expect(await t.db.gameServer.findUniqueOrThrow({ where: { id: other.id } })).toMatchObject({
      notQueryable: true,
      status: "UNKNOWN",
      lastQueriedAt: null,
    });
  });
});
