/**
 * Writers over the same servers at once (issue 11 item 3): two sources listing the same fleet in
 * different orders (a Valve master and the Steam Web API both list a server), query batches of both
 * crawls with different answered / failed mixes, and crawls closing (missed listings) all run together
 * against real PostgreSQL. Every write takes its row locks in one order: no deadlock (40P01), no
 * transaction timeout, no write lost.
 */
import { finishCrawl, listRuns, openCrawl } from "../../src/crawler/store/crawl-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import {
  recordListing,
  writeBatchOutcomes,
  type BatchOutcome,
  type ListingRow,
} from "../../src/crawler/store/server-store";
import { createDb, type Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { makeStatus } from "../helpers/status";
import { listingRow } from "../helpers/listing-row";

jest.setTimeout(240_000);

const SERVERS = 300;
const ROUNDS = 6;

/** A small deterministic PRNG (mulberry32): the same interleavings on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const row = (i: number): ListingRow => {
  const ip = `127.0.${1 + (i % 5)}.${1 + (i % 200)}`;
  return listingRow(20_000 + i, { address: ip, ip });
};

describe("concurrent writers over the same servers", () => {
  let t: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    t = await createTestDatabase();
    // As many connections as a busy worker process uses: every writer below gets its own.
    db = createDb(t.url, { max: 16 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await t?.drop();
  });

  it("deadlocks nowhere and loses nothing", async () => {
    const random = rng(11);
    const sources = await Promise.all(
      ["master", "web-api"].map((name) =>
        db.masterSource.create({ data: { name, kind: "ADDRESS_LIST", host: name } }),
      ),
    );
    const rows = Array.from({ length: SERVERS }, (_, i) => row(i));
    const failures: string[] = [];
    const track = <T>(p: Promise<T>): Promise<T | null> =>
      p.catch((err: unknown) => {
        failures.push(err instanceof Error ? err.message.slice(0, 300) : String(err));
        return null;
      });

    type Planned = { crawlId: number; crawlAt: Date; batchKeys: string[] };
    let previous: Planned[] = [];
    let written = 0;
    let expectedSamples = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const opened = await Promise.all(
        sources.map(async (s, i) => {
          // Distinct crawl times: one sample per server and crawl time.
          const c = await openCrawl(db, {
            key: `${s.name}-${round}`,
            sourceId: s.id,
            startedAt: new Date(Date.now() + i),
            splits: [{ region: 3, split: "" }],
          });
          await ensureSamplePartition(db, c.startedAt);
          const [run] = await listRuns(db, c.id);
          return { c, runId: run!.id, sourceId: s.id };
        }),
      );
      // A crawl of each source that closes with every server of its source missed (started "later").
      const closers = await Promise.all(
        sources.map((s) =>
          openCrawl(db, {
            key: `${s.name}-close-${round}`,
            sourceId: s.id,
            startedAt: new Date(Date.now() + 3600_000),
            splits: [],
          }),
        ),
      );
      const work: Promise<unknown>[] = [];
      // Both sources list the whole fleet, each in its own order.
      const listings = opened.map((o) =>
        track(
          recordListing(db, {
            crawlId: o.c.id,
            crawlAt: o.c.startedAt,
            runId: o.runId,
            sourceId: o.sourceId,
            label: "r3-0",
            batchSize: 25,
            partial: false,
            error: null,
            rows: shuffled(rows, random),
          }),
        ),
      );
      work.push(...listings);
      // The previous round's batches of both crawls, with outcomes in any order and any mix.
      for (const p of previous) {
        for (const batchKey of p.batchKeys) {
          work.push(
            track(
              (async () => {
                const batch = await db.crawlBatch.findUniqueOrThrow({
                  where: { crawlId_batchKey: { crawlId: p.crawlId, batchKey } },
                });
                const outcomes: BatchOutcome[] = shuffled(batch.serverIds.map(Number), random).map(
                  (id) =>
                    random() < 0.5
                      ? {
                          serverId: id,
                          kind: "answered",
                          status: makeStatus({ name: `s${id}`, players: id % 7 }),
                          pingMs: 5,
                        }
                      : { serverId: id, kind: "failed", code: "TIMEOUT" },
                );
                const r = await writeBatchOutcomes(db, {
                  crawlId: p.crawlId,
                  crawlAt: p.crawlAt,
                  batchKey,
                  offlineAfterFailures: 2,
                  outcomes,
                });
                written += r.written;
                expectedSamples += outcomes.length;
              })(),
            ),
          );
        }
      }
      work.push(
        ...closers.map((c) =>
          track(finishCrawl(db, c.id, { delistAfterMissedCrawls: 1000, fakePortsPerIp: 0 })),
        ),
      );
      await Promise.all(work);
      previous = [];
      for (const [i, l] of (await Promise.all(listings)).entries()) {
        if (l)
          previous.push({
            crawlId: opened[i]!.c.id,
            crawlAt: opened[i]!.c.startedAt,
            batchKeys: l.batchKeys,
          });
      }
    }

    expect(failures).toEqual([]);
    expect(await db.gameServer.count()).toBe(SERVERS);
    expect(written).toBe(expectedSamples);
    expect(written).toBeGreaterThan(0);
  });
});
