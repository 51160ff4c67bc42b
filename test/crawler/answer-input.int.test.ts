/**
 * The answer update's input (src/crawler/store/state-input.ts): each answer goes to PostgreSQL as a JSON array
 * read back by position, its text arrays as PostgreSQL array literals. Every column must arrive as it was
 * sent, whatever text a server put in it, and a missing value must leave NULL (or the column's kept value).
 */
import { Client } from "pg";
import { listRuns, openCrawl } from "../../src/crawler/store/crawl-store";
import { ensureSamplePartition } from "../../src/crawler/store/partitions";
import { recordListing, writeBatchOutcomes } from "../../src/crawler/store/server-store";
import { textArrayLiteral } from "../../src/crawler/store/state-input";
import type { ServerStatus } from "../../src/protocol";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { listingRow } from "../helpers/listing-row";
import { makeStatus } from "../helpers/status";

/** Text that means something to an array literal, to JSON or to SQL. */
const AWKWARD = [
  "",
  "plain",
  'say "hi"',
  "back\\slash",
  "\\",
  '"',
  "a,b",
  "{braces}",
  "}",
  "NULL",
  "null",
  " spaced ",
  "tab\there",
  "line\nbreak",
  "'quote'",
  "ünïcødé ✓ 😀",
];

describe("the answer update's input", () => {
  let t: TestDatabase;
  let sourceId: number;
  let crawlNo = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    sourceId = (
      await t.db.masterSource.create({
        data: { name: "src", kind: "ADDRESS_LIST", host: "127.0.0.1" },
      })
    ).id;
  });
  afterAll(async () => t.drop());

  /** Lists the servers at these ports in a new crawl and writes each one's answer in one batch. */
  async function crawlAnswers(answers: Map<number, ServerStatus>): Promise<Map<number, bigint>> {
    const c = await openCrawl(t.db, {
      key: `c${++crawlNo}`,
      sourceId,
      startedAt: new Date(Date.now() + crawlNo * 1000),
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
      batchSize: 100,
      partial: false,
      error: null,
      rows: [...answers.keys()].map((port) => listingRow(port, { gamePort: port + 1 })),
      deferListedAt: false,
    });
    const servers = await t.db.gameServer.findMany({ select: { id: true, queryPort: true } });
    const idOfPort = new Map(servers.map((s) => [s.queryPort, s.id]));
    const batchKey = listing.batchKeys[0]!;
    const batch = await t.db.crawlBatch.findUniqueOrThrow({
      where: { crawlId_batchKey: { crawlId: c.id, batchKey } },
    });
    const portOfId = new Map(servers.map((s) => [s.id, s.queryPort]));
    await writeBatchOutcomes(t.db, {
      crawlId: c.id,
      crawlAt: c.startedAt,
      batchKey,
      offlineAfterFailures: 2,
      outcomes: batch.serverIds.map((id) => {
        const status = answers.get(portOfId.get(id)!)!;
        return { serverId: Number(id), kind: "answered" as const, status, pingMs: status.pingMs };
      }),
    });
    return idOfPort;
  }

  it("stores every column as sent, whatever text it holds", async () => {
    const full = makeStatus({
      name: 'He said "gg" \\o/ {x,y}',
      map: "de_dust2'; DROP TABLE game_server; --",
      folder: "csgo",
      game: "Counter-Strike ✓",
      appId: 730,
      gameId: "730",
      players: 2,
      maxPlayers: 24,
      bots: 0,
      passwordProtected: true,
      vacSecured: false,
      dedicated: false,
      serverType: "listen",
      os: "windows",
      version: "1.38.7.9",
      keywords: AWKWARD,
      gamePort: 27016,
      steamId: "90071992547409920",
      tvPort: 27020,
      tvName: 'TV "one"',
      playerList: [
        { name: 'a "quoted" \\ name', score: -3, durationSeconds: 12.5 },
        { name: "", score: 0, durationSeconds: 0 },
      ],
      rules: [{ name: "sv_tags", value: AWKWARD.join(",") }],
      pingMs: 33,
    });
    const sparse = makeStatus({
      appId: null,
      gameId: null,
      bots: null,
      passwordProtected: null,
      vacSecured: null,
      dedicated: null,
      os: null,
      version: null,
      keywords: [],
      gamePort: null,
      steamId: null,
      playerList: [],
      rules: [],
      raw: { hostname: "legacy", g_gametype: "4" },
      pingMs: null,
    });
    const ids = await crawlAnswers(
      new Map([
        [27015, full],
        [27115, sparse],
      ]),
    );
    const rows = await t.db.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT query_port, name, map, folder, game, app_id, game_id, players, players_source::text, max_players, bots,
        password_protected, vac_secured, dedicated, server_type, os, version, keywords, steam_id, tv_port, tv_name,
        ping_ms, game_port, player_list, rules, raw, player_names, fake_reasons::text[], status::text
      FROM game_server ORDER BY query_port`,
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({
      query_port: 27015,
      name: full.name,
      map: full.map,
      folder: "csgo",
      game: full.game,
      app_id: 730,
      game_id: "730",
      players: 2,
      players_source: "A2S_INFO",
      max_players: 24,
      bots: 0,
      password_protected: true,
      vac_secured: false,
      dedicated: false,
      server_type: "l",
      os: "windows",
      version: "1.38.7.9",
      keywords: AWKWARD,
      steam_id: "90071992547409920",
      tv_port: 27020,
      tv_name: 'TV "one"',
      ping_ms: 33,
      game_port: 27016,
      player_list: full.playerList,
      rules: full.rules,
      raw: null,
      player_names: 'a "quoted" \\ name',
      fake_reasons: [],
      status: "ONLINE",
    });
    // Nothing sent: NULL, the listing's game port kept, empty lists as empty lists, raw values as sent.
    expect(rows[1]).toMatchObject({
      query_port: 27115,
      app_id: null,
      game_id: null,
      bots: null,
      password_protected: null,
      vac_secured: null,
      dedicated: null,
      server_type: null,
      os: null,
      version: null,
      keywords: [],
      steam_id: null,
      tv_port: null,
      tv_name: null,
      ping_ms: null,
      game_port: 27116,
      player_list: [],
      rules: [],
      raw: { hostname: "legacy", g_gametype: "4" },
      player_names: "",
      fake_reasons: [],
      status: "ONLINE",
    });
    expect(ids.size).toBe(2);
  });

  it("sets the answer's fake-player reasons, and clears them when the next answer has none", async () => {
    const crowd = Array.from({ length: 30 }, () => ({ name: "bot", score: 0, durationSeconds: 0 }));
    await crawlAnswers(new Map([[27215, makeStatus({ players: 30, playerList: crowd })]]));
    const reasonsOf = async (): Promise<{ fake_reasons: string[]; suspected_fake: boolean }> =>
      (
        await t.db.$queryRawUnsafe<{ fake_reasons: string[]; suspected_fake: boolean }[]>(
          "SELECT fake_reasons::text[], suspected_fake FROM game_server WHERE query_port = 27215",
        )
      )[0]!;
    const flagged = await reasonsOf();
    expect(flagged.suspected_fake).toBe(true);
    expect(flagged.fake_reasons.length).toBeGreaterThan(0);
    await crawlAnswers(new Map([[27215, makeStatus()]]));
    expect(await reasonsOf()).toEqual({ fake_reasons: [], suspected_fake: false });
  });

  it("writes text arrays PostgreSQL reads back as the same strings", async () => {
    const c = new Client({ connectionString: t.url });
    await c.connect();
    try {
      for (const values of [[], [""], AWKWARD, ["\\\\", '\\"', '"\\'], ["x".repeat(5000)]]) {
        const res = await c.query<{ a: string[] }>("SELECT $1::text[] AS a", [
          textArrayLiteral(values),
        ]);
        expect(res.rows[0]!.a).toEqual(values);
      }
    } finally {
      await c.end();
    }
  });
});
