/**
 * The shared-names rule backs off after running over its budget (src/crawler/store/shared-names.ts): a pool
 * too large for its 30 s would otherwise cost the whole 30 s at every close and decide nothing (100,000
 * simulated servers did, before the rule counted its pairs in memory). Real closes on a real database; the
 * budget is cut to 1 ms to make a 2,000-server pool too large.
 */
import { finishCrawl, openCrawl } from "../../src/crawler/store/crawl-store";
import { auth, startTestApi } from "../graphql/helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

jest.setTimeout(120_000);

describe("the shared-names rule's back-off across closes", () => {
  let t: TestDatabase;
  let sourceId: number;
  let closes = 0;
  beforeAll(async () => {
    t = await createTestDatabase();
    sourceId = (
      await t.db.masterSource.create({ data: { name: "pool", kind: "ADDRESS_LIST", host: "x" } })
    ).id;
    // 2,000 servers answering now, 20 names each from a pool of 500: every name on ~80 servers.
    await t.db.gameServer.createMany({
      data: Array.from({ length: 2000 }, (_, i) => ({
        address: "192.0.2.1",
        queryPort: 1000 + i,
        sourceId,
        status: "ONLINE" as const,
        lastAnsweredAt: new Date(),
        playerNames: Array.from({ length: 20 }, (_, j) => `p${(i * 7 + j * 13) % 500}`).join("\n"),
      })),
    });
  });
  afterAll(async () => t?.drop());

  async function close(budgetMs: number, onFailure?: (err: unknown) => void): Promise<string> {
    const crawl = await openCrawl(t.db, {
      key: `close-${++closes}`,
      sourceId,
      startedAt: new Date(Date.now() - 60_000),
      splits: [],
    });
    const result = await finishCrawl(t.db, crawl.id, {
      delistAfterMissedCrawls: 99,
      fakePortsPerIp: 0,
      sharedNamesBudgetMs: budgetMs,
      ...(onFailure ? { onFailure } : {}),
    });
    expect(result.finished).toBe(true);
    return result.sharedPlayerNames;
  }

  it("skips 1, then 3 closes after over-budget runs, runs again after one that fitted, and keeps the record", async () => {
    expect(await close(1)).toBe("over budget");
    expect(await close(1)).toBe("skipped");
    expect(await close(1)).toBe("over budget");
    for (let i = 0; i < 3; i++) expect(await close(60_000)).toBe("skipped");
    expect(await close(60_000)).toBe("checked");
    expect(await close(1)).toBe("over budget");
    expect(await close(1)).toBe("skipped");
    expect(await close(1)).toBe("over budget");

    const rows = await t.db.crawl.findMany({
      orderBy: { id: "asc" },
      select: { sharedNames: true, sharedNamesPool: true },
    });
    expect(rows.map((r) => r.sharedNames)).toEqual(
      ["over budget", "skipped", "over budget", "skipped", "skipped", "skipped", "checked"].concat([
        "over budget",
        "skipped",
        "over budget",
      ]),
    );
    expect(new Set(rows.map((r) => r.sharedNamesPool))).toEqual(new Set([2000]));
  });

  it("tries again at once when the pool shrank (servers went offline)", async () => {
    // Backing off now (the last test ended on a second over-budget run in a row).
    expect(await close(1)).toBe("skipped");
    await t.db.$executeRaw`UPDATE game_server SET status = 'OFFLINE' WHERE query_port < 1400`;
    expect(await close(1)).toBe("over budget");
    const last = await t.db.crawl.findFirstOrThrow({
      orderBy: { id: "desc" },
      select: { sharedNamesPool: true },
    });
    expect(last.sharedNamesPool).toBe(1600);
  });

  it("shows the operator in the API whether a close brought the flags up to date", async () => {
    const api = await startTestApi({ db: t.db });
    try {
      const res = await api.gql<{ crawls: Array<{ sharedNamesCheck: string | null }> }>(
        "{ crawls(first: 3) { sharedNamesCheck } }",
        {},
        auth(),
      );
      expect(res.errors).toBeUndefined();
      expect(res.data?.crawls.map((c) => c.sharedNamesCheck)).toEqual([
        "OVER_BUDGET",
        "SKIPPED",
        "OVER_BUDGET",
      ]);
    } finally {
      await api.close();
    }
  });

  it("says why a run failed, the crawl closed all the same, and counts an error past the budget as over budget", async () => {
    // A pool below 90 % of the last over-budget one's, so that this close tries the rule instead of backing off.
    await t.db.$executeRaw`UPDATE game_server SET status = 'OFFLINE' WHERE query_port < 1800`;
    // A database error in the rule's read (the column it reads, gone for this test): "failed", not thrown.
    await t.db.$executeRawUnsafe(
      "ALTER TABLE game_server RENAME COLUMN player_names TO player_names_gone",
    );
    const failures: unknown[] = [];
    const late: unknown[] = [];
    try {
      expect(await close(60_000, (err) => failures.push(err))).toBe("failed");
      // The same error once the budget has run out (0 ms): the run could not have fitted it, so it is over
      // budget and the back-off follows; the error is still reported, unless the budget's own cut came first.
      expect(await close(0, (err) => late.push(err))).toBe("over budget");
    } finally {
      await t.db.$executeRawUnsafe(
        "ALTER TABLE game_server RENAME COLUMN player_names_gone TO player_names",
      );
    }
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/player_names/);
    for (const err of late) expect(String(err)).toMatch(/player_names/);
  });
});
