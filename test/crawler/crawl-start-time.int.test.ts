/**
 * A crawl of a source never starts before the source's last crawl closed. The start step takes its start
 * time before it waits for the source's lock, so a tick that came as the last crawl was closing found it
 * closed, yet carried a time a few ms before that close (crawl-overlap.int.test.ts failed on it in CI).
 */
import { openCrawlIfIdle } from "../../src/crawler/store/crawl-store";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

describe("a crawl's start time", () => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("is not before the source's last crawl closed, and is the caller's when that is later", async () => {
    const source = await t.db.masterSource.create({
      data: { name: "master", kind: "ADDRESS_LIST", host: "master" },
    });
    const t0 = Date.UTC(2026, 10, 29, 12, 0, 0);
    const open = (key: string, startedAtMs: number) =>
      openCrawlIfIdle(t.db, {
        key,
        sourceId: source.id,
        startedAt: new Date(startedAtMs),
        splits: [],
      });
    const close = (key: string, finishedAtMs: number) =>
      t.db.crawl.update({ where: { key }, data: { finishedAt: new Date(finishedAtMs) } });

    const first = await open("master-1", t0);
    expect(first.opened?.startedAt.getTime()).toBe(t0);
    // It closes at t0 + 10 s; the next start step took its time at t0 + 9.995 s, before it got the lock.
    await close("master-1", t0 + 10_000);
    const second = await open("master-2", t0 + 9_995);
    expect(second.opened?.startedAt.getTime()).toBe(t0 + 10_000);
    await close("master-2", t0 + 20_000);
    const third = await open("master-3", t0 + 25_000);
    expect(third.opened?.startedAt.getTime()).toBe(t0 + 25_000);
  });
});
