/**
 * A listing's last write and a query batch of its own run, at once (the scale bench's 4-worker crawls of
 * c908414 lost batch jobs and a listing job to 40P01 this way, and queried those batches again). A
 * batch's write moves the crawl's counters, then its run's; the listing's end used to claim its run first
 * and move the crawl's counters after. Here the batch is made to wait for the crawl row first and the
 * listing's end right behind it, which is the order in which those two deadlocked.
 */
import { Client } from "pg";
import { listRuns, openCrawl } from "../../src/crawler/store/crawl-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import {
  recordListing,
  recordListingPart,
  writeBatchOutcomes,
  type ListingRow,
} from "../../src/crawler/store/server-store";
import { createDb, type Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { listingRow } from "../helpers/listing-row";
import { makeStatus } from "../helpers/status";

jest.setTimeout(60_000);

/** A failed write as what it said, so that the expectation below shows it (40P01: "deadlock detected"). */
const failure = (err: unknown): { failed: string } => ({
  failed: err instanceof Error ? err.message : String(err),
});

const rows = (from: number, count: number): ListingRow[] =>
  Array.from({ length: count }, (_, i) => listingRow(from + i));

describe("a listing's end beside a batch of its own run", () => {
  let t: TestDatabase;
  let db: Db;
  let blocker: Client;
  let watcher: Client;

  beforeAll(async () => {
    t = await createTestDatabase();
    db = createDb(t.url, { max: 8 });
    blocker = new Client({ connectionString: t.url });
    watcher = new Client({ connectionString: t.url });
    await Promise.all([blocker.connect(), watcher.connect()]);
  });
  afterAll(async () => {
    await Promise.all([blocker?.end(), watcher?.end()]);
    await db?.$disconnect();
    await t?.drop();
  });

  /** Until `n` of the database's sessions wait for a lock. */
  async function untilWaiting(n: number): Promise<void> {
    for (;;) {
      const r = await watcher.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if ((r.rows[0]?.n ?? 0) >= n) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("both wait for the crawl row in turn, and neither deadlocks", async () => {
    const source = await db.masterSource.create({
      data: { name: "master", kind: "ADDRESS_LIST", host: "master" },
    });
    const crawl = await openCrawl(db, {
      key: "master-1",
      sourceId: source.id,
      startedAt: new Date(),
      splits: [{ region: 3, split: "" }],
    });
    await ensureSamplePartition(db, crawl.startedAt);
    const [run] = await listRuns(db, crawl.id);
    const listing = {
      crawlId: crawl.id,
      crawlAt: crawl.startedAt,
      runId: run!.id,
      sourceId: source.id,
      label: "r3-0",
      batchSize: 10,
    };
    // The listing's first part: its batch is what runs while the listing ends.
    const part = await recordListingPart(db, { ...listing, rows: rows(27000, 10) });
    expect(part.batchKeys).toEqual(["r3-0-0"]);
    const batch = await db.crawlBatch.findUniqueOrThrow({
      where: { crawlId_batchKey: { crawlId: crawl.id, batchKey: "r3-0-0" } },
    });

    // Another writer holds the crawl row (another batch moving the counters).
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM crawl WHERE id = $1 FOR UPDATE", [crawl.id]);
    const batchWrite = writeBatchOutcomes(db, {
      crawlId: crawl.id,
      crawlAt: crawl.startedAt,
      batchKey: "r3-0-0",
      offlineAfterFailures: 2,
      outcomes: batch.serverIds.map((id) => ({
        serverId: Number(id),
        kind: "answered" as const,
        status: makeStatus({ name: `s${id}`, players: 1 }),
        pingMs: 5,
      })),
    }).catch(failure);
    await untilWaiting(1);
    const listingEnd = recordListing(db, {
      ...listing,
      partial: false,
      error: null,
      foundBefore: 10,
      rows: rows(27010, 5),
    }).catch(failure);
    await untilWaiting(2);
    await blocker.query("COMMIT");

    const [written, ended] = await Promise.all([batchWrite, listingEnd]);
    expect(written).toMatchObject({ duplicate: false, answered: 10 });
    expect(ended).toMatchObject({ alreadyDone: false, found: 15, batchKeys: ["r3-0-1"] });
    const runAfter = await db.crawlRun.findUniqueOrThrow({ where: { id: run!.id } });
    expect(runAfter.found).toBe(15);
    expect(runAfter.finishedAt).not.toBeNull();
    const counters = await db.crawl.findUniqueOrThrow({ where: { id: crawl.id } });
    expect(counters).toMatchObject({ listed: 15, answered: 10 });
  });
});
