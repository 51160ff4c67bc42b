/**
 * A Valve master listing cut short by the master's rate limit goes on where it stopped at the region's next
 * crawl, so a region longer than one rate-limit window is covered over successive crawls (before, every
 * crawl started over and never got past the first pages). The simulated master answers 3 packets of 10
 * addresses, then goes silent for a moment; nothing is queried (the querier fails every server at once).
 */
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import type { Querier } from "../../src/crawler/querier";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { startSimValveMaster, type SimValveMaster } from "../../src/simulator/master";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { makeListTestFleet } from "../helpers/master-fleet";

jest.setTimeout(120_000);

const EUROPE = 3;
// The listing's per-request timeout is what cuts a crawl short once the master goes silent, so it must be
// generous enough that a loaded machine still gets the answered packets in time (100 ms was not: the first
// crawl sometimes found nothing), and shorter than the silence, so the silent request times out inside it.
const MASTER_TIMEOUT_MS = 1_500;
const SILENCE_MS = 2_500;
const fleet = makeListTestFleet(900); // 100 servers in each of the 9 region codes
const inEurope = fleet
  .filter((s) => s.region === EUROPE)
  .map((s) => `${s.host}:${s.queryPort}`)
  .sort();
const noQueries: Querier = { query: () => Promise.resolve({ kind: "failed", code: "TIMEOUT" }) };

describe("Valve master listing resumed across crawls", () => {
  let t: TestDatabase;
  let master: SimValveMaster;
  beforeAll(async () => {
    t = await createTestDatabase();
    master = await startSimValveMaster({
      fleet,
      addressesPerPacket: 10,
      rateLimit: { packetsPerWindow: 3, windowMs: 60_000, silenceMs: SILENCE_MS },
    });
  });
  afterAll(async () => {
    await master?.close();
    await t?.drop();
  });

  it("lists the whole region over successive crawls, then starts over from the first page", async () => {
    const source = await t.db.masterSource.create({
      data: {
        name: "valve-limited",
        kind: "VALVE_UDP",
        host: master.address.host,
        port: master.address.port,
        regions: [EUROPE],
        options: { requestsPerMinute: 0, retries: 0 },
      },
    });
    const config = loadConfig({
      MASTER_TIMEOUT_MS: String(MASTER_TIMEOUT_MS),
      JOB_BACKOFF_MS: "0",
      ADDRESS_ALLOW_LIST: "127.0.0.0/8",
    });
    const runs: {
      found: number;
      partial: boolean;
      error: string | null;
      resumeCursor: string | null;
    }[] = [];
    for (let crawl = 0; crawl < 6; crawl++) {
      await new Promise((resolve) => setTimeout(resolve, SILENCE_MS + 50)); // let the master's silence pass
      await runCrawlOnce({
        config,
        db: t.db,
        logger: silentLogger,
        sourceId: source.id,
        querier: noQueries,
      });
      const run = await t.db.crawlRun.findFirstOrThrow({
        where: { crawl: { sourceId: source.id } },
        orderBy: { id: "desc" },
      });
      runs.push({
        found: run.found,
        partial: run.partial,
        error: run.error,
        resumeCursor: run.resumeCursor,
      });
    }
    const listed = await t.db.gameServer.findMany({
      where: { sourceId: source.id },
      select: { address: true, queryPort: true },
    });
    expect(listed.map((s) => `${s.address}:${s.queryPort}`).sort()).toEqual(inEurope);

    // Each crawl took what one window allows; the first stopped short with a cursor, the next went on from it.
    expect(runs[0]).toMatchObject({
      found: 30,
      partial: true,
      error: expect.stringContaining("TIMEOUT"),
    });
    expect(runs[0]!.resumeCursor).toMatch(/^127\.\d+\.\d+\.\d+:\d+$/);
    expect(runs[1]!.error).toContain("TIMEOUT");
    expect(runs[1]!.found).toBe(30);
    const ended = runs.findIndex((r) => r.resumeCursor === null);
    expect(ended).toBeGreaterThan(1);
    expect(runs[ended]!.partial).toBe(true); // resumed: it did not see the first pages
    expect(runs[ended]!.error).toContain("resumed after");
    // The crawl after the end of the list starts from the first page again (with what is left of the window).
    expect(runs[ended + 1]).toMatchObject({
      partial: true,
      error: expect.stringContaining("TIMEOUT"),
    });
    expect(runs[ended + 1]!.found).toBeGreaterThan(0);
    expect(runs[ended + 1]!.error).not.toContain("resumed");
  });
});
