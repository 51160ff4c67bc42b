/**
 * The order of a crawl's close (crawl-jobs.ts finishCrawl): the made-up start of a skipped tick comes
 * before the shared-names rule, which may take its whole budget; the rule comes before the roll-up (the
 * population leaves suspects out: fake-players.int.test.ts). What the release saw is read from the
 * servers' flags, which the rule sets.
 */
import { finishCrawl, type JobSink } from "../../src/crawler/crawl-jobs";
import { buildCrawlDeps } from "../../src/crawler/runtime";
import { openCrawl } from "../../src/crawler/store/crawl-store";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const SHARED = ["xXFragLordXx", "NightHawk", "SilentBob", "PixelQueen", "TurboSnail", "LuckyLuke"];

describe("a crawl's close", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("releases the skipped tick before the shared-names rule runs, and still runs the rule", async () => {
    const source = await t.db.masterSource.create({
      data: { name: "farm", kind: "ADDRESS_LIST", host: "x" },
    });
    // Four servers with one name list: the rule (3 servers, 5 names each by default) flags all four.
    await t.db.gameServer.createMany({
      data: [0, 1, 2, 3].map((i) => ({
        address: "192.0.2.7",
        queryPort: 27015 + i,
        sourceId: source.id,
        status: "ONLINE" as const,
        lastAnsweredAt: new Date(),
        playerNames: SHARED.join("\n"),
      })),
    });
    const crawl = await openCrawl(t.db, {
      key: "farm-1",
      sourceId: source.id,
      startedAt: new Date(Date.now() - 60_000),
      splits: [],
    });
    const flaggedAtRelease: number[] = [];
    const sink: JobSink = {
      listRuns: () => Promise.resolve(),
      queryBatches: () => Promise.resolve(),
      finishCrawl: () => Promise.resolve(),
      releaseCatchUp: async (key) => {
        expect(key).toBe("farm-1");
        flaggedAtRelease.push(await t.db.gameServer.count({ where: { suspectedFake: true } }));
      },
    };
    const deps = buildCrawlDeps({ config: loadConfig({}), db: t.db, logger: silentLogger, sink });

    await finishCrawl(deps, { crawlId: crawl.id, crawlKey: crawl.key });

    expect(flaggedAtRelease).toEqual([0]);
    expect(await t.db.gameServer.count({ where: { suspectedFake: true } })).toBe(4);
    expect(
      (await t.db.crawl.findUniqueOrThrow({ where: { id: crawl.id } })).finishedAt,
    ).not.toBeNull();
  });
});
