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
    const first = await openCrawlIfIdle(t.db, {
      key: "master-1",
      sourceId: source.id,
      startedAt: new Date(t0),
      splits: [],
    });
    expect(first.opened?.startedAt.getTime()).toBe(t0);
    // It closes at t0 + 10 s; the next start step took its time at t0 + 9.995 s, before it got the lock.
    await t.db.crawl.update({
      where: { key: "master-1" },
      data: { finishedAt: new Date(t0 + 10_000) },
    });
    const second = await openCrawlIfIdle(t.db, {
      key: "master-2",
      sourceId: source.id,
      startedAt: new Date(t0 + 9_995),
      splits: [],
    });
    expect(second.opened?.startedAt.getTime()).toBe(t0 + 10_000);
    await t.db.crawl.update({
      where: { key: "master-2" },
      data: { finishedAt: new Date(t0 + 20_000) },
    });
    const third = await openCrawlIfIdle(t.db, {
      key: "master-3",
      sourceId: source.id,
      startedAt: new Date(t0 + 25_000),
      splits: [],
    });
    expect(third.opened?.startedAt.getTime()).toBe(t0 + 25_000);
  });
});
