/** A query batch job's read of its batch and servers (crawl-store.ts batchServers). */
import { batchServers, openCrawl } from "../../src/crawler/store/crawl-store";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

describe("batchServers", () => {
  let t: TestDatabase;
  let crawlId: number;
  let ids: number[];

  beforeAll(async () => {
    t = await createTestDatabase();
    const sourceId = (
      await t.db.masterSource.create({
        data: { name: "src", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
    crawlId = (
      await openCrawl(t.db, {
        key: "b1",
        sourceId,
        startedAt: new Date(),
        splits: [{ region: 0, split: "" }],
      })
    ).id;
    ids = [];
    for (const [queryPort, protocol, managementRegistered] of [
      [27015, "source", false],
      [27960, "quake3", false],
      [7777, "bomberman", true],
    ] as const) {
      const s = await t.db.gameServer.create({
        data: { address: "127.0.0.5", queryPort, protocol, managementRegistered },
      });
      ids.push(Number(s.id));
    }
    const deleted = await t.db.gameServer.create({
      data: { address: "127.0.0.6", queryPort: 27015 },
    });
    await t.db.crawlBatch.createMany({
      data: [
        { crawlId, batchKey: "open", serverIds: [...ids, Number(deleted.id)].map(BigInt) },
        { crawlId, batchKey: "done", serverIds: ids.map(BigInt), doneAt: new Date() },
        { crawlId, batchKey: "gone", serverIds: [deleted.id] },
      ],
    });
    await t.db.gameServer.delete({ where: { id: deleted.id } });
  });
  afterAll(async () => t.drop());

  it("gives an open batch's servers, without one deleted since it was planned", async () => {
    const batch = await batchServers(t.db, crawlId, "open");
    expect(batch?.done).toBe(false);
    expect(batch?.servers.sort((a, b) => a.id - b.id)).toEqual([
      {
        id: ids[0],
        address: "127.0.0.5",
        queryPort: 27015,
        protocol: "source",
        managementRegistered: false,
      },
      {
        id: ids[1],
        address: "127.0.0.5",
        queryPort: 27960,
        protocol: "quake3",
        managementRegistered: false,
      },
      {
        id: ids[2],
        address: "127.0.0.5",
        queryPort: 7777,
        protocol: "bomberman",
        managementRegistered: true,
      },
    ]);
  });

  it("says a written batch is done, with nothing left to query", async () => {
    expect(await batchServers(t.db, crawlId, "done")).toEqual({ done: true, servers: [] });
  });

  it("gives an open batch whose servers are all gone as empty, and an unknown batch as null", async () => {
    expect(await batchServers(t.db, crawlId, "gone")).toEqual({ done: false, servers: [] });
    expect(await batchServers(t.db, crawlId, "nope")).toBeNull();
    expect(await batchServers(t.db, crawlId + 1, "open")).toBeNull();
  });
});
