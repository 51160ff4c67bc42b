import {
  abandonStaleCrawls,
  finishCrawl,
  isCrawlComplete,
  listRuns,
  openCrawl,
} from "../../src/crawler/store/crawl-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import {
  recordListing,
  writeBatchOutcomes,
  type ListingRow,
} from "../../src/crawler/store/server-store";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { listingRow } from "../helpers/listing-row";
import { makeStatus } from "../helpers/status";

const row = listingRow;

describe("server store", () => {
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

  async function crawl(
    key: string,
    ports: number[],
    outcome: (id: number) => "ok" | "fail" = () => "ok",
  ) {
    const startedAt = new Date();
    const c = await openCrawl(t.db, {
      key,
      sourceId,
      startedAt,
      splits: [{ region: 3, split: "" }],
    });
    await ensureSamplePartition(t.db, c.startedAt);
    const [run] = await listRuns(t.db, c.id);
    const listing = await recordListing(t.db, {
      crawlId: c.id,
      crawlAt: c.startedAt,
      runId: run!.id,
      sourceId,
      label: "r3-0",
      batchSize: 2,
      partial: false,
      error: null,
      rows: ports.map((p) => row(p)),
    });
    for (const key of listing.batchKeys) {
      const batch = await t.db.crawlBatch.findUniqueOrThrow({
        where: { crawlId_batchKey: { crawlId: c.id, batchKey: key } },
      });
      const outcomes = batch.serverIds.map(Number).map((id) =>
        outcome(id) === "ok"
          ? {
              serverId: id,
              kind: "answered" as const,
              status: makeStatus({ name: `s${id}`, players: id % 7 }),
              pingMs: 5,
            }
          : { serverId: id, kind: "failed" as const, code: "TIMEOUT" },
      );
      const first = await writeBatchOutcomes(t.db, {
        crawlId: c.id,
        crawlAt: c.startedAt,
        batchKey: key,
        offlineAfterFailures: 2,
        outcomes,
      });
      expect(first.duplicate).toBe(false);
      const again = await writeBatchOutcomes(t.db, {
        crawlId: c.id,
        crawlAt: c.startedAt,
        batchKey: key,
        offlineAfterFailures: 2,
        outcomes,
      });
      expect(again.duplicate).toBe(true);
    }
    expect(await isCrawlComplete(t.db, c.id)).toBe(true);
    const fin = await finishCrawl(t.db, c.id, { delistAfterMissedCrawls: 2, fakePortsPerIp: 0 });
    expect(fin.finished).toBe(true);
    expect(
      (await finishCrawl(t.db, c.id, { delistAfterMissedCrawls: 2, fakePortsPerIp: 0 })).finished,
    ).toBe(false);
    return c;
  }

  it("writes state and one sample per server per crawl, and a retried listing plans nothing new", async () => {
    const c = await crawl("a", [27015, 27016, 27017]);
    const servers = await t.db.gameServer.findMany({ orderBy: { queryPort: "asc" } });
    expect(servers).toHaveLength(3);
    expect(
      servers.every(
        (s) => s.status === "ONLINE" && s.name === `s${s.id}` && s.playerNames === "alice",
      ),
    ).toBe(true);
    expect(await t.db.serverSample.count()).toBe(3);
    const crawlRow = await t.db.crawl.findUniqueOrThrow({ where: { id: c.id } });
    expect(crawlRow).toMatchObject({ listed: 3, queried: 3, answered: 3, failed: 0, written: 3 });
    const [run] = await listRuns(t.db, c.id);
    const retry = await recordListing(t.db, {
      crawlId: c.id,
      crawlAt: c.startedAt,
      runId: run!.id,
      sourceId,
      label: "r3-0",
      batchSize: 2,
      partial: false,
      error: null,
      rows: [row(27015)],
    });
    expect(retry.alreadyDone).toBe(true);
    expect(retry.batchKeys).toEqual(["r3-0-0", "r3-0-1"]);
  });

  it("N failures make a server OFFLINE with its last state kept; M missed listings DELIST it", async () => {
    const victim = Number(
      (await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27016 } })).id,
    );
    await crawl("b", [27015, 27016, 27017], (id) => (id === victim ? "fail" : "ok"));
    let s = await t.db.gameServer.findUniqueOrThrow({ where: { id: victim } });
    expect(s).toMatchObject({ status: "ONLINE", consecutiveFailures: 1, lastError: "TIMEOUT" });
    await crawl("c", [27015, 27016, 27017], (id) => (id === victim ? "fail" : "ok"));
    s = await t.db.gameServer.findUniqueOrThrow({ where: { id: victim } });
    expect(s).toMatchObject({
      status: "OFFLINE",
      consecutiveFailures: 2,
      name: `s${victim}`,
      map: "de_dust2",
    });
    expect(await t.db.serverSample.count({ where: { gameServerId: victim } })).toBe(3);
    expect(await t.db.serverSample.count({ where: { gameServerId: victim, online: false } })).toBe(
      2,
    );

    // 27017 disappears from its source: one miss, then DELISTED; listed again, it comes back.
    await crawl("d", [27015, 27016]);
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27017 } })).status).toBe(
      "ONLINE",
    );
    await crawl("e", [27015, 27016]);
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27017 } })).status).toBe(
      "DELISTED",
    );
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27016 } })).status).toBe(
      "ONLINE",
    );
    await crawl("f", [27015, 27016, 27017]);
    expect((await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27017 } })).status).toBe(
      "ONLINE",
    );
  });

  it("samples management registrations as reported, never planning a query for them, and survives hostile text", async () => {
    const c = await openCrawl(t.db, {
      key: "m",
      sourceId,
      startedAt: new Date(),
      splits: [{ region: -1, split: "" }],
    });
    const [run] = await listRuns(t.db, c.id);
    const res = await recordListing(t.db, {
      crawlId: c.id,
      crawlAt: c.startedAt,
      runId: run!.id,
      sourceId,
      label: "all-0",
      batchSize: 10,
      partial: false,
      error: null,
      rows: [
        row(40000, {
          address: "bombergame.example.org",
          ip: null,
          notQueryable: true,
          managed: true,
          protocol: "bomberman",
          region: null,
          reported: { name: "bomb\u0000er \ud800", players: 22, maxPlayers: 4, map: "Standard A" },
        }),
        row(40001, { notQueryable: true }),
      ],
    });
    expect(res.batchKeys).toEqual([]);
    const s = await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 40000 } });
    expect(s).toMatchObject({
      status: "ONLINE",
      players: 22,
      maxPlayers: 4,
      name: "bomber \ufffd",
      managementRegistered: true,
      protocol: "bomberman",
    });
    expect(await t.db.serverSample.count({ where: { gameServerId: s.id } })).toBe(1);
  });
});

describe("listing ids", () => {
  let t: TestDatabase;
  let sourceId: number;
  beforeAll(async () => {
    t = await createTestDatabase();
    sourceId = (
      await t.db.masterSource.create({
        data: { name: "ids", kind: "VALVE_UDP", host: "127.0.0.1" },
      })
    ).id;
  });
  afterAll(async () => t.drop());

  /** The sequence's position: ids drawn so far (0 before the first). */
  async function idsDrawn(): Promise<number> {
    const [s] = await t.db.$queryRaw<
      { last_value: bigint; is_called: boolean }[]
    >`SELECT last_value, is_called FROM game_server_id_seq`;
    return s!.is_called ? Number(s!.last_value) : 0;
  }

  const fleet = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) =>
      row(20000 + from + i, {
        address: `127.0.${(from + i) % 7}.1`,
        ip: `127.0.${(from + i) % 7}.1`,
      }),
    );

  /** One crawl listing the same servers under two regions, as a Valve master's 0xFF region lists everyone again. */
  async function listTwice(key: string, rows: ListingRow[]) {
    const c = await openCrawl(t.db, {
      key,
      sourceId,
      startedAt: new Date(),
      splits: [
        { region: 3, split: "" },
        { region: 255, split: "" },
      ],
    });
    await ensureSamplePartition(t.db, c.startedAt);
    const runs = await listRuns(t.db, c.id);
    for (const [i, run] of runs.entries()) {
      await recordListing(t.db, {
        crawlId: c.id,
        crawlAt: c.startedAt,
        runId: run.id,
        sourceId,
        label: `r${run.region}-${i}`,
        batchSize: 50,
        partial: false,
        error: null,
        rows: rows.map((r) => ({ ...r, region: run.region })),
      });
    }
    return c;
  }

  it("draws an id only for a server never listed before, over 50 crawls of the same fleet", async () => {
    const known = fleet(0, 120);
    const before = await idsDrawn();
    for (let n = 0; n < 50; n++) {
      // Crawl 25 finds 10 new servers; every other crawl lists what is known.
      await listTwice(`c${n}`, n >= 25 ? [...known, ...fleet(1000, 10)] : known);
    }
    expect(await idsDrawn()).toBe(before + 130);
    expect(await t.db.gameServer.count()).toBe(130);
    const last = await t.db.crawl.findFirstOrThrow({ where: { key: "c49" } });
    // Each crawl plans every queryable server exactly once and counts it once.
    expect(last.listed).toBe(130);
    const planned = await t.db.$queryRaw<{ n: bigint; d: bigint }[]>`
      SELECT count(*) AS n, count(DISTINCT id) AS d FROM (SELECT unnest(server_ids) AS id FROM crawl_batch WHERE crawl_id = ${last.id}) x`;
    expect(Number(planned[0]!.n)).toBe(130);
    expect(Number(planned[0]!.d)).toBe(130);
  }, 120_000);

  it("concurrent listings of the same new servers create each once and both plan them", async () => {
    const rows = fleet(5000, 40);
    const before = await idsDrawn();
    const other = (
      await t.db.masterSource.create({
        data: { name: "ids2", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
    const open = async (key: string, src: number) => {
      const c = await openCrawl(t.db, {
        key,
        sourceId: src,
        startedAt: new Date(),
        splits: [{ region: 3, split: "" }],
      });
      await ensureSamplePartition(t.db, c.startedAt);
      return { c, run: (await listRuns(t.db, c.id))[0]! };
    };
    const a = await open("conc-a", sourceId);
    const b = await open("conc-b", other);
    const results = await Promise.all(
      [a, b].map(({ c, run }, i) =>
        recordListing(t.db, {
          crawlId: c.id,
          crawlAt: c.startedAt,
          runId: run.id,
          sourceId: i === 0 ? sourceId : other,
          label: "r3-0",
          batchSize: 1000,
          partial: false,
          error: null,
          // Opposite orders: the store takes its row locks in one order whatever the listing's.
          rows: i === 0 ? rows : [...rows].reverse(),
        }),
      ),
    );
    expect(results.map((r) => r.found)).toEqual([40, 40]);
    expect(await idsDrawn()).toBeLessThanOrEqual(before + 40 + 40);
    expect(await t.db.gameServer.count({ where: { queryPort: { gte: 25000, lt: 26000 } } })).toBe(
      40,
    );
    for (const { c } of [a, b]) {
      const planned = await t.db.$queryRaw<
        { n: bigint }[]
      >`SELECT count(*) AS n FROM (SELECT unnest(server_ids) FROM crawl_batch WHERE crawl_id = ${c.id}) x`;
      expect(Number(planned[0]!.n)).toBe(40);
    }
  });
});

describe("registrations of listed addresses", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.drop());

  async function list(key: string, sourceId: number, rows: ListingRow[]) {
    const c = await openCrawl(t.db, {
      key,
      sourceId,
      startedAt: new Date(),
      splits: [{ region: -1, split: "" }],
    });
    await ensureSamplePartition(t.db, c.startedAt);
    const [run] = await listRuns(t.db, c.id);
    return recordListing(t.db, {
      crawlId: c.id,
      crawlAt: c.startedAt,
      runId: run!.id,
      sourceId,
      label: "all-0",
      batchSize: 10,
      partial: false,
      error: null,
      rows,
    });
  }

  it("a crawled listing takes over a registration and clears what it reported; a registration never changes a crawled row", async () => {
    const crawled = (
      await t.db.masterSource.create({
        data: { name: "list", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
    const management = (
      await t.db.masterSource.create({
        data: { name: "mgmt", kind: "MANAGEMENT", host: "127.0.0.1" },
      })
    ).id;
    const registration = row(27015, {
      managed: true,
      notQueryable: true,
      protocol: "bomberman",
      region: null,
      reported: { name: "HIJACKED", players: 4, maxPlayers: 4 },
    });

    await list("m1", management, [registration]);
    const before = await t.db.gameServer.findFirstOrThrow({ where: { queryPort: 27015 } });
    expect(before).toMatchObject({
      managementRegistered: true,
      name: "HIJACKED",
      players: 4,
      status: "ONLINE",
      sourceId: management,
    });
    // The registration's (empty) rules were written with their digest.
    expect(before.rulesDigest).not.toBeNull();

    const taken = await list("l1", crawled, [row(27015)]);
    expect(taken.batchKeys).toEqual(["all-0-0"]);
    const after = await t.db.gameServer.findUniqueOrThrow({ where: { id: before.id } });
    expect(after).toMatchObject({
      managementRegistered: false,
      notQueryable: false,
      protocol: "source",
      sourceId: crawled,
      name: null,
      players: 0,
      maxPlayers: 0,
      status: "UNKNOWN",
      lastAnsweredAt: null,
      rules: [],
      rulesDigest: null,
    });

    const samples = await t.db.serverSample.count();
    const again = await list("m2", management, [registration]);
    expect(again.found).toBe(1);
    expect(await t.db.gameServer.findUniqueOrThrow({ where: { id: before.id } })).toEqual(after);
    expect(await t.db.gameServer.count()).toBe(1);
    expect(await t.db.serverSample.count()).toBe(samples);
  });

  it("writes listed host names that need quoting, and finds each again at the next listing", async () => {
    const sourceId = (
      await t.db.masterSource.create({
        data: { name: "quoting", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
    const hosts = [
      'a"b.example',
      "back\\slash.example",
      "{brace},comma",
      "it's",
      "emoji-\u{1f600}",
      "NULL",
    ];
    const rows = hosts.map((address, i) =>
      listingRow(42000 + i, { address, ip: null, notQueryable: true, region: null }),
    );
    const first = await list("quoting-1", sourceId, rows);
    expect(first.found).toBe(hosts.length);
    const stored = await t.db.gameServer.findMany({
      where: { sourceId },
      orderBy: { queryPort: "asc" },
    });
    expect(stored.map((s) => s.address)).toEqual(hosts);
    const second = await list("quoting-2", sourceId, rows);
    expect(second.found).toBe(hosts.length);
    const again = await t.db.gameServer.findMany({
      where: { sourceId },
      orderBy: { queryPort: "asc" },
    });
    expect(again.map((s) => s.id)).toEqual(stored.map((s) => s.id));
    expect(
      again.every((s, i) => s.lastListedAt!.getTime() > stored[i]!.lastListedAt!.getTime()),
    ).toBe(true);
  });
});

describe("stale crawls", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.drop());

  it("closes crawls of a source left open too long as partial, leaving newer ones alone", async () => {
    const sourceId = (
      await t.db.masterSource.create({ data: { name: "s", kind: "ADDRESS_LIST", host: "x" } })
    ).id;
    const old = await openCrawl(t.db, {
      key: "old",
      sourceId,
      startedAt: new Date(Date.now() - 3600_000),
      splits: [],
    });
    const recent = await openCrawl(t.db, {
      key: "recent",
      sourceId,
      startedAt: new Date(),
      splits: [],
    });
    expect(await abandonStaleCrawls(t.db, sourceId, new Date(Date.now() - 60_000))).toBe(1);
    expect(await t.db.crawl.findUniqueOrThrow({ where: { id: old.id } })).toMatchObject({
      partial: true,
      error: expect.stringMatching(/abandoned/),
    });
    expect(
      (await t.db.crawl.findUniqueOrThrow({ where: { id: recent.id } })).finishedAt,
    ).toBeNull();
  });
});

describe("fake farms", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.drop());

  it("flags many ports on one IP as suspected fakes, except in ranges exempt from the farm rule", async () => {
    const sourceId = (
      await t.db.masterSource.create({ data: { name: "f", kind: "ADDRESS_LIST", host: "x" } })
    ).id;
    const rows = (ip: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ address: ip, ip, queryPort: 30000 + i, sourceId }));
    await t.db.gameServer.createMany({
      data: [...rows("203.0.113.7", 5), ...rows("198.51.100.1", 2), ...rows("127.0.0.1", 5)],
    });
    const c = await openCrawl(t.db, { key: "f1", sourceId, startedAt: new Date(), splits: [] });
    await finishCrawl(t.db, c.id, {
      delistAfterMissedCrawls: 99,
      fakePortsPerIp: 3,
      exemptCidrs: ["127.0.0.0/8"],
    });
    const fakes = await t.db.gameServer.groupBy({
      by: ["address"],
      where: { suspectedFake: true },
      _count: true,
    });
    expect(fakes.map((f) => f.address)).toEqual(["203.0.113.7"]);
  });
});
