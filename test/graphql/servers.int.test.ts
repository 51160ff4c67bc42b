/**
 * `servers`, `server`, `serverByAddress` over real HTTP against a seeded database: every filter against
 * the same predicate evaluated over the seed, every ordering walked forward and backward, paging across
 * inserts, and the BAD_USER_INPUT / NOT_FOUND errors.
 */
import { Prisma } from "../../src/generated/prisma/client";
import { encodeCursor } from "../../src/graphql/common/cursor";
import {
  OrderDirection,
  ServerOrderField,
  type ServerFilterInput,
} from "../../src/graphql/game-server/game-server.args";
import { buildServerWhere } from "../../src/graphql/game-server/server-filter";
import { listServerPage } from "../../src/graphql/game-server/server-list";
import { SORT_KEYS } from "../../src/graphql/game-server/server-order";
import type { Db } from "../../src/shared/db";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createCountingDb, startTestApi, type CountingDb, type TestApi } from "./helpers/api";
import { seedServers, type FleetServer, type SeededIndex } from "./helpers/seed";

const FLEET = 150;
let tdb: TestDatabase;
let counting: CountingDb;
let api: TestApi;
let seed: SeededIndex;

beforeAll(async () => {
  tdb = await createTestDatabase("gsindex_gql_servers");
  counting = createCountingDb(tdb.url);
  seed = await seedServers(counting.db, FLEET);
  api = await startTestApi({ db: counting.db });
}, 30_000);

afterAll(async () => {
  await api?.close();
  await counting?.db.$disconnect();
  await tdb?.drop();
});

type Node = { id: number; name: string | null; players: number };
type Page = {
  servers: {
    totalCount: number;
    edges: { cursor: string; node: Node }[];
    pageInfo: {
      hasNextPage: boolean;
      hasPreviousPage: boolean;
      startCursor: string | null;
      endCursor: string | null;
    };
  };
};

const PAGE_QUERY = `query($filter: ServerFilterInput, $orderBy: ServerOrderInput, $first: Int, $after: String, $last: Int, $before: String) {
  servers(filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
    totalCount
    edges { cursor node { id name players } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

const idOf = (s: FleetServer): number => seed.ids[s.i] as number;
const listed = (s: FleetServer): boolean => !s.hidden && !s.suspectedFake && !s.isRelay;

async function page(vars: Record<string, unknown>): Promise<Page["servers"]> {
  const res = await api.gql<Page>(PAGE_QUERY, vars);
  expect(res.errors).toBeUndefined();
  return (res.data as Page).servers;
}

async function allIds(
  filter: Record<string, unknown> | null,
  orderBy?: Record<string, unknown>,
  size = 40,
): Promise<number[]> {
  const ids: number[] = [];
  let after: string | null = null;
  for (let guard = 0; guard < 50; guard++) {
    const p = await page({ filter, orderBy, first: size, after });
    ids.push(...p.edges.map((e) => e.node.id));
    if (!p.pageInfo.hasNextPage) return ids;
    after = p.pageInfo.endCursor;
  }
  throw new Error("too many pages");
}

// The seed's sort keys as the SQL computes them (COALESCE sentinels, lower-cased text in code-point order).
const TEXT_MAX = String.fromCodePoint(0x10ffff);
const keyOf: Record<string, (s: FleetServer) => number | string> = {
  PLAYERS: (s) => s.players,
  MAX_PLAYERS: (s) => s.maxPlayers,
  NAME: (s) => s.name?.toLowerCase() ?? TEXT_MAX,
  MAP: (s) => s.map?.toLowerCase() ?? TEXT_MAX,
  LAST_SEEN: (s) => s.lastAnsweredAt?.getTime() ?? 0,
  FIRST_SEEN: (s) => s.firstSeenAt.getTime(),
  PING: (s) => s.pingMs ?? 32767,
};

function expectedOrder(
  field: string,
  direction: "ASC" | "DESC",
  pred: (s: FleetServer) => boolean = () => true,
): number[] {
  const key = keyOf[field] as (s: FleetServer) => number | string;
  const sign = direction === "ASC" ? 1 : -1;
  return seed.servers
    .filter((s) => listed(s) && pred(s))
    .sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (ka !== kb) return (ka < kb ? -1 : 1) * sign;
      return (idOf(a) - idOf(b)) * sign;
    })
    .map(idOf);
}

describe("servers: ordering and keyset paging", () => {
  it("defaults to players, most first, 20 a page, with totalCount", async () => {
    const p = await page({});
    expect(p.edges.map((e) => e.node.id)).toEqual(expectedOrder("PLAYERS", "DESC").slice(0, 20));
    expect(p.totalCount).toBe(seed.servers.filter(listed).length);
    expect(p.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  for (const field of Object.keys(keyOf)) {
    for (const direction of ["ASC", "DESC"] as const) {
      it(`${field} ${direction}: forward pages give the whole ordering, backward pages give it reversed`, async () => {
        const expected = expectedOrder(field, direction);
        expect(await allIds(null, { field, direction }, 40)).toEqual(expected);

        const back: number[] = [];
        let before: string | null = null;
        for (let guard = 0; guard < 50; guard++) {
          const p = await page({ orderBy: { field, direction }, last: 40, before });
          back.unshift(...p.edges.map((e) => e.node.id));
          if (!p.pageInfo.hasPreviousPage) break;
          before = p.pageInfo.startCursor;
        }
        expect(back).toEqual(expected);
      });
    }
  }

  it("gives a row the same cursor whichever page it is read from", async () => {
    const a = await page({ first: 30 });
    const b = await page({ first: 10, after: a.edges[9]?.cursor });
    expect(b.edges.map((e) => e.cursor)).toEqual(a.edges.slice(10, 20).map((e) => e.cursor));
  });

  it("continues after its cursor across inserts, without repeats or skips", async () => {
    const first = await page({ orderBy: { field: "PLAYERS", direction: "DESC" }, first: 10 });
    const last = first.edges[first.edges.length - 1]?.node as Node;
    // One server that sorts before the cursor, one just after it (same players, id higher → later in DESC? no: lower first).
    await counting.db.gameServer.createMany({
      data: [
        {
          address: "127.9.0.1",
          queryPort: 27015,
          status: "ONLINE",
          players: 32,
          maxPlayers: 32,
          name: "inserted top",
        },
        {
          address: "127.9.0.2",
          queryPort: 27015,
          status: "ONLINE",
          players: Math.max(0, last.players - 1),
          maxPlayers: 32,
          name: "inserted after",
        },
      ],
    });
    try {
      const rest = await allIds(null, { field: "PLAYERS", direction: "DESC" }, 40);
      const next = await page({
        orderBy: { field: "PLAYERS", direction: "DESC" },
        first: 100,
        after: first.pageInfo.endCursor,
      });
      const firstIds = first.edges.map((e) => e.node.id);
      const nextIds = next.edges.map((e) => e.node.id);
      expect(nextIds.filter((id) => firstIds.includes(id))).toEqual([]);
      // Page 2 is exactly what follows the cursor row in the ordering as it is now.
      const at = rest.indexOf(last.id);
      expect(nextIds).toEqual(rest.slice(at + 1, at + 1 + 100));
      const inserted = await counting.db.gameServer.findMany({
        where: { address: { in: ["127.9.0.1", "127.9.0.2"] } },
      });
      const afterRow = inserted.find((r) => r.name === "inserted after") as { id: bigint };
      const topRow = inserted.find((r) => r.name === "inserted top") as { id: bigint };
      expect(nextIds).toContain(Number(afterRow.id));
      expect(nextIds).not.toContain(Number(topRow.id));
      // And back from page 2's start returns page 1 plus the new top row.
      const back = await page({
        orderBy: { field: "PLAYERS", direction: "DESC" },
        last: 11,
        before: next.pageInfo.startCursor,
      });
      expect(back.edges.map((e) => e.node.id)).toEqual(rest.slice(Math.max(0, at - 10), at + 1));
    } finally {
      await counting.db.gameServer.deleteMany({
        where: { address: { in: ["127.9.0.1", "127.9.0.2"] } },
      });
    }
  });

  it("reads a page with a fixed number of statements whatever its position (keyset, no OFFSET)", async () => {
    const order = { field: "NAME", direction: "ASC" };
    const p1 = await page({ orderBy: order, first: 5 });
    counting.reset();
    await page({ orderBy: order, first: 5, after: p1.pageInfo.endCursor });
    const deep = await allIds(null, order, 100);
    const lastCursorPage = await page({ orderBy: order, first: 100 });
    counting.reset();
    await page({
      orderBy: order,
      first: 5,
      after: lastCursorPage.edges[lastCursorPage.edges.length - 6]?.cursor,
    });
    const statements = counting.statements();
    expect(deep.length).toBeGreaterThan(100);
    // the page (keyset and rows in one statement), the count
    expect(statements).toHaveLength(2);
    const keyset = statements.find((s) => s.includes("sort_value")) as string;
    expect(keyset).toMatch(/\(.*g\.id\) > \(/);
    expect(keyset).not.toMatch(/\bOFFSET\b/i);
  });
});

describe("servers: query plans", () => {
  const INDEX: Record<string, string> = {
    PLAYERS: "game_server_players_id_idx",
    MAX_PLAYERS: "game_server_max_players_id_idx",
    NAME: "game_server_name_key_id_idx",
    MAP: "game_server_map_key_id_idx",
    LAST_SEEN: "game_server_sort_last_seen_key_id_idx",
    FIRST_SEEN: "game_server_first_seen_at_id_idx",
    PING: "game_server_sort_ping_key_id_idx",
  };

  /** The keyset statement listServerPage would send, captured instead of run. */
  async function keysetSql(
    field: ServerOrderField,
    direction: OrderDirection,
    backward: boolean,
    filter: ServerFilterInput | null = null,
  ): Promise<Prisma.Sql> {
    let captured: Prisma.Sql | undefined;
    const fake = {
      $queryRaw: (strings: TemplateStringsArray, ...values: unknown[]) => (
        (captured = Prisma.sql(strings, ...values)),
        Promise.resolve([])
      ),
    };
    const key = SORT_KEYS[field];
    const value = key.kind === "text" ? "m" : 5;
    const cursor = encodeCursor({ order: `${key.cursorName}:${direction}`, value, id: 10 });
    await listServerPage(
      fake as unknown as Db,
      buildServerWhere(filter, new Date()),
      key,
      direction,
      {
        direction: backward ? "backward" : "forward",
        size: 20,
        cursor,
        cursorArgument: backward ? "before" : "after",
      },
    );
    return captured as Prisma.Sql;
  }

  it("one game by players: a range scan of that game's rows, cursor included, both directions, no sort", async () => {
    for (const direction of [OrderDirection.ASC, OrderDirection.DESC]) {
      for (const backward of [false, true]) {
        const sql = await keysetSql(ServerOrderField.PLAYERS, direction, backward, { appId: 10 });
        const plan = await counting.db.$transaction(async (tx) => {
          await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
          await tx.$executeRawUnsafe("SET LOCAL enable_bitmapscan = off");
          const rows = await tx.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(
            `EXPLAIN ${sql.text}`,
            ...sql.values,
          );
          return rows.map((r) => r["QUERY PLAN"]).join("\n");
        });
        expect(plan).toContain("game_server_app_id_players_id_idx");
        expect(plan).toMatch(/Index Cond: \(\(app_id = (\$\d+|\d+)\) AND \(ROW\(/);
        expect(plan).not.toMatch(/\bSort\b/);
      }
    }
  });

  // With sequential scans priced out the planner shows whether the ordering's index can serve the page:
  // one range scan from the cursor, in either direction, and no sort of the table.
  for (const field of Object.values(ServerOrderField)) {
    it(`${field}: an index range scan from the cursor, both directions, no sort`, async () => {
      for (const direction of [OrderDirection.ASC, OrderDirection.DESC]) {
        for (const backward of [false, true]) {
          const sql = await keysetSql(field, direction, backward);
          const plan = await counting.db.$transaction(async (tx) => {
            await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
            await tx.$executeRawUnsafe("SET LOCAL enable_bitmapscan = off");
            const rows = await tx.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(
              `EXPLAIN ${sql.text}`,
              ...sql.values,
            );
            return rows.map((r) => r["QUERY PLAN"]).join("\n");
          });
          expect(plan).toContain(INDEX[field]);
          expect(plan).toMatch(/Index Cond: \(ROW\(/);
          expect(plan).not.toMatch(/\bSort\b/);
        }
      }
    });
  }
});

describe("servers: filters", () => {
  const cases: Array<[string, Record<string, unknown>, (s: FleetServer) => boolean]> = [
    [
      "search (case-insensitive, inside the name)",
      { search: "CHARLIE" },
      (s) => !!s.name?.toLowerCase().includes("charlie"),
    ],
    ["search with LIKE metacharacters matches literally", { search: "%" }, () => false],
    ["folder", { folder: "tf" }, (s) => s.folder === "tf"],
    ["appId", { appId: 10 }, (s) => s.appId === 10],
    ["map exact", { map: "de_dust" }, (s) => s.map === "de_dust"],
    ["map exact, other case", { map: "DE_DUST2" }, (s) => s.map === "de_dust2"],
    ["map prefix", { map: "de_*" }, (s) => !!s.map?.startsWith("de_")],
    ["map wildcard", { map: "*dust*" }, (s) => !!s.map?.includes("dust")],
    ["map: _ is not a wildcard", { map: "de_dust_" }, () => false],
    ["regions", { regions: [0, 2] }, (s) => s.region === 0 || s.region === 2],
    ["countries", { countries: ["de", "FR"] }, (s) => s.country === "DE" || s.country === "FR"],
    ["protocols", { protocols: ["source"] }, () => true],
    [
      "tagsAll",
      { tagsAll: ["secure", "rtv"] },
      (s) => s.keywords.includes("secure") && s.keywords.includes("rtv"),
    ],
    [
      "tagsAny",
      { tagsAny: ["hardcore", "rtv"] },
      (s) => s.keywords.includes("hardcore") || s.keywords.includes("rtv"),
    ],
    [
      "players min/max",
      { playersMin: 5, playersMax: 10 },
      (s) => s.players >= 5 && s.players <= 10,
    ],
    ["notEmpty", { notEmpty: true }, (s) => s.players > 0],
    ["notFull", { notFull: true }, (s) => s.players < s.maxPlayers],
    ["hasBots", { hasBots: true }, (s) => s.bots > 0],
    ["no bots", { hasBots: false }, (s) => s.bots === 0],
    ["password", { password: true }, (s) => s.passwordProtected],
    ["vac false", { vac: false }, (s) => !s.vacSecured],
    ["dedicated", { dedicated: true }, (s) => s.dedicated],
    ["os", { os: "MAC" }, (s) => s.os === "mac"],
    [
      "statuses",
      { statuses: ["OFFLINE", "DELISTED"] },
      (s) => s.status === "OFFLINE" || s.status === "DELISTED",
    ],
    ["address (one IP)", { address: "127.0.0.5" }, (s) => s.address === "127.0.0.5"],
    ["address (CIDR)", { address: "127.0.1.0/24" }, (s) => s.address.startsWith("127.0.1.")],
    ["address (IPv6 CIDR)", { address: "2001:db8::/32" }, (s) => s.address.startsWith("2001:db8")],
    [
      "lastSeenWithinSeconds",
      { lastSeenWithinSeconds: 30 * 60 },
      (s) => s.lastAnsweredAt !== null && s.lastAnsweredAt.getTime() >= Date.now() - 30 * 60_000,
    ],
    [
      "playerName",
      { playerName: "PLAYER_7_" },
      (s) => s.playerNames.some((n) => n.includes("player_7_")),
    ],
    [
      "several at once",
      { folder: "cstrike", notEmpty: true, countries: ["DE"] },
      (s) => s.folder === "cstrike" && s.players > 0 && s.country === "DE",
    ],
  ];
  for (const [name, filter, pred] of cases) {
    it(name, async () => {
      const ids = await allIds(filter, { field: "PLAYERS", direction: "DESC" });
      expect(ids).toEqual(expectedOrder("PLAYERS", "DESC", pred));
      expect((await page({ filter, first: 1 })).totalCount).toBe(ids.length);
    });
  }

  it("sourceId", async () => {
    expect(await allIds({ sourceId: seed.sourceId })).toEqual(expectedOrder("PLAYERS", "DESC"));
    expect(await allIds({ sourceId: seed.sourceId + 1000 })).toEqual([]);
  });

  it("leaves suspected fakes and relays out by default, and in on request; hidden servers never", async () => {
    const all = await allIds({ excludeSuspectedFakes: false });
    const fakes = seed.servers.filter((s) => (s.suspectedFake || s.isRelay) && !s.hidden).map(idOf);
    expect(fakes.length).toBeGreaterThan(0);
    for (const id of fakes) expect(all).toContain(id);
    expect(all).not.toContain(idOf(seed.servers.find((s) => s.hidden) as FleetServer));
    const dflt = await allIds(null);
    for (const id of fakes) expect(dflt).not.toContain(id);
  });
});

describe("servers: bad arguments", () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ["a page over the cap", { first: 101 }, "first"],
    ["last over the cap", { last: 500 }, "last"],
    ["negative first", { first: -1 }, "first"],
    ["first with last", { first: 5, last: 5 }, "last"],
    ["a cursor that is not one", { first: 5, after: "bm90IGEgY3Vyc29y" }, "after"],
    ["garbage cursor", { first: 5, after: "!!!" }, "after"],
    ["a bad CIDR", { filter: { address: "10.0.0.0/33" } }, "filter.address"],
    ["a bad address", { filter: { address: "example.org" } }, "filter.address"],
    ["an unknown protocol", { filter: { protocols: ["nope"] } }, "filter.protocols"],
    [
      "playersMax below playersMin",
      { filter: { playersMin: 10, playersMax: 2 } },
      "filter.playersMax",
    ],
    ["a bad country", { filter: { countries: ["DEU"] } }, "filter.countries"],
    ["an empty search", { filter: { search: "  " } }, "filter.search"],
    ["a bad region", { filter: { regions: [300] } }, "filter.regions"],
  ];
  for (const [name, vars, argumentName] of bad) {
    it(`${name} → BAD_USER_INPUT naming ${argumentName}`, async () => {
      const res = await api.gql(PAGE_QUERY, vars);
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName });
    });
  }

  it("refuses a cursor made under another ordering", async () => {
    const p = await page({ orderBy: { field: "NAME" }, first: 2 });
    const res = await api.gql(PAGE_QUERY, {
      orderBy: { field: "PLAYERS" },
      first: 2,
      after: p.pageInfo.endCursor,
    });
    expect(res.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "after",
    });
    const before = await api.gql(PAGE_QUERY, {
      orderBy: { field: "NAME", direction: "DESC" },
      last: 2,
      before: p.pageInfo.endCursor,
    });
    expect(before.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "before",
    });
  });
});

describe("server and serverByAddress", () => {
  const ONE = `query($id: Int!) { server(id: $id) { id address queryPort name map folder appId players maxPlayers bots status os keywords
    passwordProtected vacSecured dedicated country region pingMs firstSeenAt lastAnsweredAt
    playerList { name score durationSeconds } rules { name value } source { id name } } }`;

  it("returns current state with players, rules and its source; times in UTC", async () => {
    const s = seed.servers[14] as FleetServer;
    const res = await api.gql<{ server: Record<string, unknown> }>(ONE, { id: idOf(s) });
    expect(res.errors).toBeUndefined();
    expect(res.data?.server).toMatchObject({
      id: idOf(s),
      address: s.address,
      name: s.name,
      map: s.map,
      players: s.players,
      os: "MAC",
      keywords: s.keywords,
      status: s.status,
      firstSeenAt: s.firstSeenAt.toISOString(),
      rules: [{ name: "mp_timelimit", value: "30" }],
      source: { id: seed.sourceId, name: "sim" },
    });
    expect(String(res.data?.server["lastAnsweredAt"])).toMatch(/Z$/);
    expect(res.data?.server["playerList"]).toEqual(
      s.playerNames.map((name, k) => ({ name, score: k, durationSeconds: 60.5 * k })),
    );
  });

  it("NOT_FOUND for an unknown id", async () => {
    const res = await api.gql(ONE, { id: 999_999 });
    expect(res.data?.["server"]).toBeNull();
    expect(res.errors?.[0]?.extensions?.["code"]).toBe("NOT_FOUND");
  });

  const BY_ADDRESS =
    "query($a: String!, $p: Int!) { serverByAddress(address: $a, port: $p) { id } }";
  it("finds a server by address and query port, IPv6 in any spelling", async () => {
    const v4 = seed.servers[5] as FleetServer;
    expect((await api.gql(BY_ADDRESS, { a: v4.address, p: v4.queryPort })).data).toEqual({
      serverByAddress: { id: idOf(v4) },
    });
    const v6 = seed.servers[3] as FleetServer;
    const expanded = v6.address.replace("2001:db8::", "2001:0db8:0:0:0:0:0:");
    expect((await api.gql(BY_ADDRESS, { a: expanded, p: v6.queryPort })).data).toEqual({
      serverByAddress: { id: idOf(v6) },
    });
  });

  it("BAD_USER_INPUT for a bad address or port, NOT_FOUND for an unknown one", async () => {
    expect(
      (await api.gql(BY_ADDRESS, { a: "300.1.1.1", p: 27015 })).errors?.[0]?.extensions,
    ).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "address" });
    expect(
      (await api.gql(BY_ADDRESS, { a: "127.0.0.1", p: 70000 })).errors?.[0]?.extensions,
    ).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "port" });
    expect(
      (await api.gql(BY_ADDRESS, { a: "127.0.0.1", p: 1 })).errors?.[0]?.extensions?.["code"],
    ).toBe("NOT_FOUND");
  });
});

describe("servers: totals for the filter", () => {
  const TOTALS =
    "query($filter: ServerFilterInput) { servers(filter: $filter, first: 1) { totalCount totalPlayers } }";
  const playersOnline = (pred: (s: FleetServer) => boolean): number =>
    seed.servers
      .filter((s) => listed(s) && pred(s) && s.status === "ONLINE")
      .reduce((sum, s) => sum + s.players, 0);

  it("totalPlayers sums the players of the matching ONLINE servers, in one statement with totalCount", async () => {
    counting.reset();
    const all = await api.gql<{ servers: { totalCount: number; totalPlayers: number } }>(
      TOTALS,
      {},
    );
    expect(all.errors).toBeUndefined();
    expect(all.data?.servers).toEqual({
      totalCount: seed.servers.filter(listed).length,
      totalPlayers: playersOnline(() => true),
    });
    expect(playersOnline(() => true)).toBeGreaterThan(0);
    // the page (keyset and rows in one statement), one count for both totals
    expect(counting.statements().length).toBe(2);

    const some = await api.gql<{ servers: { totalCount: number; totalPlayers: number } }>(TOTALS, {
      filter: { notEmpty: true, playersMax: 5 },
    });
    const pred = (s: FleetServer): boolean => s.players > 0 && s.players <= 5;
    expect(some.data?.servers).toEqual({
      totalCount: seed.servers.filter((s) => listed(s) && pred(s)).length,
      totalPlayers: playersOnline(pred),
    });
  });
});
