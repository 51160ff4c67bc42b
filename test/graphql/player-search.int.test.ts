/**
 * The `playerName` filter as players come and go (migration 20261207000000_player_name_arrivals): the search
 * table keeps the names that arrived on each server, and names that left until a close compacts the server's
 * rows, while the filter answers with the servers whose current players match, before and after compaction,
 * and while a crawl writes during one.
 */
import { Client } from "pg";
import {
  PLAYER_SEARCH_ROWS_PER_SERVER,
  compactPlayerSearch,
} from "../../src/crawler/store/player-name-search";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { startTestApi, type TestApi } from "./helpers/api";

let t: TestDatabase;
let api: TestApi;

const QUERY = `query($name: String!) {
  servers(filter: { playerName: $name }, orderBy: { field: NAME, direction: ASC }) { nodes { name } }
}`;

async function found(name: string): Promise<string[]> {
  const res = await api.gql<{ servers: { nodes: { name: string }[] } }>(QUERY, { name });
  expect(res.errors).toBeUndefined();
  return res.data?.servers.nodes.map((n) => n.name) ?? [];
}

/** The players of a server, as every writer of game_server stores them. */
async function play(server: string, players: string[]): Promise<void> {
  await t.db
    .$executeRaw`UPDATE game_server SET player_names = ${players.join("\n")} WHERE name = ${server}`;
}

async function searchRows(server: string): Promise<string[]> {
  const rows = await t.db.$queryRaw<{ names: string }[]>`
    SELECT p.names FROM game_server_player_search p JOIN game_server g ON g.id = p.game_server_id
    WHERE g.name = ${server} ORDER BY p.ctid`;
  return rows.map((r) => r.names);
}

beforeAll(async () => {
  t = await createTestDatabase("gsindex_gql_player_search");
  await t.db.$executeRawUnsafe(`
    INSERT INTO game_server (address, query_port, name, status, player_names) VALUES
      ('192.0.2.1', 1, 'one', 'ONLINE', E'alice\\nbob'),
      ('192.0.2.1', 2, 'two', 'ONLINE', 'carol'),
      ('192.0.2.1', 3, 'three', 'ONLINE', '')`);
  api = await startTestApi({ db: t.db });
}, 30_000);

afterAll(async () => {
  await api?.close();
  await t?.drop();
});

describe("servers by player name as players come and go", () => {
  it("finds the servers a player is on now, not those they left", async () => {
    expect(await found("ALI")).toEqual(["one"]);
    await play("one", ["bob"]);
    await play("three", ["alice", "dave"]);
    expect(await found("alice")).toEqual(["three"]);
    expect(await found("bob")).toEqual(["one"]);
    // Alice left "one" but its rows keep her name until they are compacted; only arrivals were written.
    expect(await searchRows("one")).toEqual(["alice\nbob"]);
    expect(await searchRows("three")).toEqual(["alice\ndave"]);
    await play("one", ["bob", "alice"]);
    expect(await found("alice")).toEqual(["one", "three"]);
    await play("two", []);
    expect(await found("carol")).toEqual([]);
  });

  it("compacts a server's rows into its current names past the bound, and finds the same servers after", async () => {
    for (let i = 0; i <= PLAYER_SEARCH_ROWS_PER_SERVER; i++) await play("two", [`guest${i}`]);
    expect((await searchRows("two")).length).toBeGreaterThan(PLAYER_SEARCH_ROWS_PER_SERVER);
    const before = (await searchRows("one")).length;
    expect(await found("guest")).toEqual(["two"]);

    expect(await compactPlayerSearch(t.db)).toBe(1);
    expect(await searchRows("two")).toEqual([`guest${PLAYER_SEARCH_ROWS_PER_SERVER}`]);
    expect((await searchRows("one")).length).toBe(before);
    expect(await found("guest")).toEqual(["two"]);
    expect(await found("guest0")).toEqual([]);
    expect(await found("alice")).toEqual(["one", "three"]);

    // A server left with nobody keeps no row once compacted.
    await play("three", []);
    expect(await compactPlayerSearch(t.db, 0)).toBe(2);
    expect(await searchRows("three")).toEqual([]);
    expect(await found("dave")).toEqual([]);
    expect(await found("bob")).toEqual(["one"]);
  });

  it("keeps the names a crawl writes while a compaction runs", async () => {
    for (let i = 0; i < 3; i++) await play("one", ["bob", `crowd${i}`]);
    const crawl = new Client({ connectionString: t.url });
    await crawl.connect();
    try {
      // The crawl's answer is written, not yet committed, when the compaction starts and ends.
      await crawl.query("BEGIN");
      await crawl.query("UPDATE game_server SET player_names = $1 WHERE name = 'one'", [
        "bob\nerin",
      ]);
      await compactPlayerSearch(t.db, 1);
      await crawl.query("COMMIT");
    } finally {
      await crawl.end();
    }
    expect(await found("erin")).toEqual(["one"]);
    expect(await found("bob")).toEqual(["one"]);
    expect(await found("crowd")).toEqual([]);
  });

  it("refuses a player name with a line break: the stored names are one per line", async () => {
    const res = await api.gql(QUERY, { name: "bob\nerin" });
    expect(res.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "filter.playerName",
    });
  });
});
