/**
 * The crawl watch of list and query jobs (src/crawler/crawl-watch.ts): every job of a crawl in a process
 * shares one poll of the crawl row, and every one of them stops when the crawl is closed.
 */
import { watchCrawl } from "../../src/crawler/crawl-watch";
import { openCrawl } from "../../src/crawler/store/crawl-store";
import type { Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { waitFor } from "../helpers/wait-for";

const JOBS = 20;
/** Polls come a second apart; generous for a loaded machine. */
const WAIT = { timeoutMs: 15_000, intervalMs: 20 };

describe("crawl watch", () => {
  let t: TestDatabase;
  let sourceId: number;

  beforeAll(async () => {
    t = await createTestDatabase();
    sourceId = (
      await t.db.masterSource.create({
        data: { name: "src", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
  });
  afterAll(async () => t.drop());

  /** The test database's client, counting its reads of crawl rows (what a watch polls). */
  function countingDb(): { db: Db; reads: () => number } {
    let reads = 0;
    const db = {
      crawl: {
        findUnique: (args: Parameters<Db["crawl"]["findUnique"]>[0]) => {
          reads++;
          return t.db.crawl.findUnique(args);
        },
      },
    } as unknown as Db;
    return { db, reads: () => reads };
  }

  it(`${JOBS} jobs of one crawl share one poll, and all stop when it is closed`, async () => {
    const crawl = await openCrawl(t.db, {
      key: "w1",
      sourceId,
      startedAt: new Date(),
      splits: [{ region: 0, split: "" }],
    });
    const { db, reads } = countingDb();
    const watches = Array.from({ length: JOBS }, () => watchCrawl(db, crawl.id));
    const disposed = watchCrawl(db, crawl.id);
    disposed.dispose();

    // One read per tick for all of them (a tick is a second; each job polling alone read JOBS times).
    await waitFor("the first poll", () => reads() > 0, WAIT);
    await new Promise((r) => setTimeout(r, 300));
    expect(reads()).toBeLessThanOrEqual(2);
    expect(watches.every((w) => !w.signal.aborted)).toBe(true);

    await t.db.crawl.update({ where: { id: crawl.id }, data: { finishedAt: new Date() } });
    await waitFor("every job stopped", () => watches.every((w) => w.signal.aborted), WAIT);
    expect(watches.every((w) => w.cancelled())).toBe(true);
    expect(disposed.signal.aborted).toBe(false);

    // A job that starts watching the closed crawl afterwards stops too.
    const late = watchCrawl(db, crawl.id);
    await waitFor("the late job stopped", () => late.signal.aborted, WAIT);
    expect(late.cancelled()).toBe(true);
    for (const w of [...watches, late]) w.dispose();
  });

  it("a job's own abort stops only that job, and is not a cancellation", async () => {
    const crawl = await openCrawl(t.db, {
      key: "w2",
      sourceId,
      startedAt: new Date(),
      splits: [{ region: 0, split: "" }],
    });
    const { db } = countingDb();
    const parent = new AbortController();
    const mine = watchCrawl(db, crawl.id, parent.signal);
    const other = watchCrawl(db, crawl.id);
    parent.abort(new Error("worker stopping"));
    expect(mine.signal.aborted).toBe(true);
    expect(mine.cancelled()).toBe(false);
    expect(other.signal.aborted).toBe(false);
    mine.dispose();
    other.dispose();
  });
});
