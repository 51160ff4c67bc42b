/**
 * Mutations over real HTTP: each one with a valid key does its job; with a missing or wrong key it is
 * UNAUTHENTICATED and the database is unchanged; bad arguments are BAD_USER_INPUT, unknown ids NOT_FOUND.
 */
import { loadConfig } from "../../src/shared/config";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import {
  auth,
  createCountingDb,
  startTestApi,
  TEST_API_KEY,
  type CountingDb,
  type TestApi,
} from "./helpers/api";
import { seedServers, type SeededIndex } from "./helpers/seed";

let tdb: TestDatabase;
let counting: CountingDb;
let api: TestApi;
let seed: SeededIndex;
const enqueued: { query: number[]; crawl: number[] } = { query: [], crawl: [] };

beforeAll(async () => {
  tdb = await createTestDatabase("gsindex_gql_admin");
  counting = createCountingDb(tdb.url);
  seed = await seedServers(counting.db, 40);
  api = await startTestApi({
    db: counting.db,
    // Loopback allow-listed, as in the tests and the demo: 127.x servers are queried, 10.x and the rest are not.
    config: {
      addressAllowList: loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }).addressAllowList,
    },
    enqueue: {
      query: (id) => Promise.resolve(void enqueued.query.push(id)),
      crawl: (id) => Promise.resolve(void enqueued.crawl.push(id)),
    },
  });
}, 30_000);

afterAll(async () => {
  await api?.close();
  await counting?.db.$disconnect();
  await tdb?.drop();
});

/** Everything a mutation could change, to compare before and after a refused one. */
async function snapshot(): Promise<string> {
  const db = counting.db;
  const [servers, sources, blocked] = await Promise.all([
    db.gameServer.findMany({
      orderBy: { id: "asc" },
      select: { id: true, hidden: true, suspectedFake: true, address: true },
    }),
    db.masterSource.findMany({ orderBy: { id: "asc" } }),
    db.$queryRaw<unknown[]>`SELECT cidr::text, reason FROM blocked_range ORDER BY id`,
  ]);
  return JSON.stringify({
    servers: servers.map((s) => ({ ...s, id: Number(s.id) })),
    sources,
    blocked,
    enqueued,
  });
}

const id = (i: number): number => seed.ids[i] as number;

const MUTATIONS: Array<[string, string, Record<string, unknown>]> = [
  [
    "addServer",
    "mutation($a: String!) { addServer(input: { address: $a, port: 27015 }) { id } }",
    { a: "127.1.2.3" },
  ],
  ["removeServer", "mutation($id: Int!) { removeServer(id: $id) }", { id: 1 }],
  ["requeryServer", "mutation($id: Int!) { requeryServer(id: $id) }", { id: 1 }],
  [
    "setServerHidden",
    "mutation($id: Int!) { setServerHidden(id: $id, hidden: true) { id } }",
    { id: 1 },
  ],
  ["clearFakeFlag", "mutation($id: Int!) { clearFakeFlag(id: $id) { id } }", { id: 1 }],
  [
    "addSource",
    'mutation { addSource(input: { name: "extra", kind: VALVE_UDP, host: "127.0.0.1", port: 27011 }) { id } }',
    {},
  ],
  [
    "updateSource",
    "mutation($id: Int!) { updateSource(id: $id, input: { enabled: false }) { id } }",
    { id: 1 },
  ],
  ["removeSource", "mutation($id: Int!) { removeSource(id: $id) }", { id: 1 }],
  ["triggerCrawl", "mutation($id: Int!) { triggerCrawl(sourceId: $id) }", { id: 1 }],
  ["blockRange", 'mutation { blockRange(cidr: "127.0.0.0/24", reason: "test") { id } }', {}],
  ["unblockRange", 'mutation { unblockRange(cidr: "127.0.0.0/24") }', {}],
  ["purgeDelisted", 'mutation { purgeDelisted(olderThan: "2100-01-01T00:00:00Z") }', {}],
];

describe("API keys", () => {
  for (const [name, query, vars] of MUTATIONS) {
    it(`${name}: missing or wrong key → UNAUTHENTICATED, nothing changed`, async () => {
      const resolvedVars =
        "id" in vars
          ? {
              ...vars,
              id: name.includes("Source") || name === "triggerCrawl" ? seed.sourceId : id(0),
            }
          : vars;
      const before = await snapshot();
      for (const headers of [
        {},
        auth("wrong-key"),
        { authorization: "Basic dXNlcjpwYXNz" },
        { authorization: `Bearer ${TEST_API_KEY}x` },
      ]) {
        const res = await api.gql(query, resolvedVars, headers);
        expect(res.errors?.[0]?.extensions?.["code"]).toBe("UNAUTHENTICATED");
        expect(res.data).toBeNull();
      }
      expect(await snapshot()).toBe(before);
    });
  }

  it("reads need no key", async () => {
    const res = await api.gql("{ sources { name } }");
    expect(res.errors).toBeUndefined();
  });

  it("any of the configured keys works", async () => {
    const res = await api.gql(
      "mutation($id: Int!) { requeryServer(id: $id) }",
      { id: id(1) },
      auth("second-key"),
    );
    expect(res.data).toEqual({ requeryServer: true });
  });
});

describe("mutations with a valid key", () => {
  it("addServer indexes a server once and queues a query of it", async () => {
    enqueued.query.length = 0;
    const q =
      'mutation($a: String!, $p: Int!) { addServer(input: { address: $a, port: $p, protocol: "quake3" }) { id address queryPort protocol status } }';
    const first = await api.gql<{ addServer: { id: number } }>(
      q,
      { a: "127.3.0.9", p: 27960 },
      auth(),
    );
    expect(first.data?.addServer).toMatchObject({
      address: "127.3.0.9",
      queryPort: 27960,
      protocol: "quake3",
      status: "UNKNOWN",
    });
    const again = await api.gql<{ addServer: { id: number } }>(
      q,
      { a: "127.3.0.9", p: 27960 },
      auth(),
    );
    expect(again.data?.addServer.id).toBe(first.data?.addServer.id);
    expect(enqueued.query).toEqual([first.data?.addServer.id, first.data?.addServer.id]);
    const v6 = await api.gql<{ addServer: { address: string } }>(
      q,
      { a: "2001:0db8:0:0::7", p: 27960 },
      auth(),
    );
    expect(v6.data?.addServer.address).toBe("2001:db8::7");
  });

  it("addServer refuses host names, bad ports and unknown protocols", async () => {
    const q =
      "mutation($a: String!, $p: Int!, $proto: String!) { addServer(input: { address: $a, port: $p, protocol: $proto }) { id } }";
    for (const [vars, argumentName] of [
      [{ a: "bombergame.example.org", p: 1, proto: "source" }, "input.address"],
      [{ a: "127.0.0.1", p: 0, proto: "source" }, "input.port"],
      [{ a: "127.0.0.1", p: 27015, proto: "telnet" }, "input.protocol"],
    ] as const) {
      const res = await api.gql(q, vars, auth());
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName });
    }
  });

  it("addServer answers what the address policy decided, and queues only what it may query (issue 12.7)", async () => {
    enqueued.query.length = 0;
    const q =
      "mutation($a: String!) { addServer(input: { address: $a, port: 27015 }) { id address notQueryable isRelay } }";
    const block = await api.gql('mutation { blockRange(cidr: "8.8.0.0/16") { cidr } }', {}, auth());
    expect(block.errors).toBeUndefined();
    const answers: Record<string, unknown> = {};
    for (const a of [
      "127.3.0.10",
      "10.0.0.1",
      "224.0.0.1",
      "169.254.1.1",
      "8.8.8.8",
      "::ffff:192.168.1.1",
    ]) {
      const res = await api.gql<{ addServer: { notQueryable: boolean; isRelay: boolean } }>(
        q,
        { a },
        auth(),
      );
      expect(res.errors).toBeUndefined();
      answers[a] = {
        notQueryable: res.data?.addServer.notQueryable,
        isRelay: res.data?.addServer.isRelay,
      };
    }
    expect(answers).toEqual({
      "127.3.0.10": { notQueryable: false, isRelay: false },
      "10.0.0.1": { notQueryable: true, isRelay: false },
      "224.0.0.1": { notQueryable: true, isRelay: false },
      "169.254.1.1": { notQueryable: true, isRelay: true },
      "8.8.8.8": { notQueryable: true, isRelay: false },
      "::ffff:192.168.1.1": { notQueryable: true, isRelay: false },
    });
    expect(enqueued.query).toHaveLength(1);
    await api.gql('mutation { unblockRange(cidr: "8.8.0.0/16") }', {}, auth());
  });

  it("addServer and blockRange refuse an IPv6 zone id as bad input (issue 12.11)", async () => {
    const before = await snapshot();
    const add = await api.gql(
      'mutation { addServer(input: { address: "fe80::1%lo", port: 27015 }) { id } }',
      {},
      auth(),
    );
    expect(add.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "input.address",
    });
    const block = await api.gql(
      'mutation { blockRange(cidr: "fe80::1%lo/64") { cidr } }',
      {},
      auth(),
    );
    expect(block.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "cidr",
    });
    expect(await snapshot()).toBe(before);
  });

  it("addSource and updateSource refuse a host the address policy refuses, saying why (issue 12.5)", async () => {
    const before = await snapshot();
    const q =
      'mutation($h: String!) { addSource(input: { name: "refused", kind: VALVE_UDP, host: $h, port: 27011 }) { id } }';
    for (const [h, why] of [
      ["10.0.0.1", "not a public address"],
      ["224.0.0.1", "not a public address"],
      ["169.254.1.1", "Steam Datagram Relay"],
      ["::ffff:10.0.0.1", "not a public address"],
      ["fe80::1%lo", "zone id"],
      ["localhost", "loopback name"],
      ["api.localhost", "loopback name"],
      ["bad host!", "neither an IP address nor a host name"],
    ] as const) {
      const res = await api.gql(q, { h }, auth());
      expect(res.errors?.[0]?.extensions).toMatchObject({
        code: "BAD_USER_INPUT",
        argumentName: "input.host",
      });
      expect(res.errors?.[0]?.message).toContain(why);
    }
    const upd = await api.gql(
      'mutation($id: Int!) { updateSource(id: $id, input: { host: "192.168.77.7" }) { id } }',
      { id: seed.sourceId },
      auth(),
    );
    expect(upd.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "input.host",
    });
    expect(await snapshot()).toBe(before);
    // A host name is accepted as given (resolved and checked at each contact, never here); an allow-listed IP too.
    for (const [name, h] of [
      ["named-master", "master.example.org"],
      ["loopback-master", "127.0.0.1"],
    ]) {
      const ok = await api.gql<{ addSource: { id: number } }>(
        `mutation { addSource(input: { name: "${name}", kind: VALVE_UDP, host: "${h}", port: 27011 }) { id } }`,
        {},
        auth(),
      );
      expect(ok.errors).toBeUndefined();
      await api.gql(
        "mutation($id: Int!) { removeSource(id: $id) }",
        { id: ok.data?.addSource.id },
        auth(),
      );
    }
  });

  it("addSource refuses kind INDEX: the index is one built-in source, a second would query every server twice", async () => {
    const before = await snapshot();
    const res = await api.gql(
      'mutation { addSource(input: { name: "index-two", kind: INDEX, host: "master.example.org" }) { id } }',
      {},
      auth(),
    );
    expect(res.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "input.kind",
    });
    expect(res.errors?.[0]?.message).toContain("built-in");
    expect(await snapshot()).toBe(before);
  });

  it("setServerHidden hides a server from lists; clearFakeFlag clears the flag", async () => {
    const target = seed.servers.find((s) => s.suspectedFake) as { i: number };
    const hide = await api.gql(
      "mutation($id: Int!) { setServerHidden(id: $id, hidden: true) { hidden } }",
      { id: id(2) },
      auth(),
    );
    expect(hide.data).toEqual({ setServerHidden: { hidden: true } });
    const list = await api.gql<{ servers: { nodes: { id: number }[] } }>(
      "{ servers(first: 100, filter: { excludeSuspectedFakes: false }) { nodes { id } } }",
    );
    expect(list.data?.servers.nodes.map((n) => n.id)).not.toContain(id(2));
    const clear = await api.gql(
      "mutation($id: Int!) { clearFakeFlag(id: $id) { suspectedFake } }",
      { id: id(target.i) },
      auth(),
    );
    expect(clear.data).toEqual({ clearFakeFlag: { suspectedFake: false } });
  });

  it("requeryServer and triggerCrawl hand work to the queue", async () => {
    enqueued.query.length = 0;
    enqueued.crawl.length = 0;
    expect(
      (await api.gql("mutation($id: Int!) { requeryServer(id: $id) }", { id: id(3) }, auth())).data,
    ).toEqual({ requeryServer: true });
    expect(
      (
        await api.gql(
          "mutation($id: Int!) { triggerCrawl(sourceId: $id) }",
          { id: seed.sourceId },
          auth(),
        )
      ).data,
    ).toEqual({ triggerCrawl: true });
    expect(enqueued).toEqual({ query: [id(3)], crawl: [seed.sourceId] });
  });

  it("sources: add, update, list with crawls, remove", async () => {
    const add = await api.gql<{ addSource: { id: number; intervalMs: number; regions: number[] } }>(
      'mutation { addSource(input: { name: "steam-csgo", kind: STEAM_WEB_API, host: "api.steampowered.com", filter: "\\\\appid\\\\730", regions: [] }) { id name kind intervalMs regions filter } }',
      {},
      auth(),
    );
    expect(add.errors).toBeUndefined();
    const sourceId = add.data?.addSource.id as number;
    const dup = await api.gql(
      'mutation { addSource(input: { name: "steam-csgo", kind: STEAM_WEB_API, host: "x" }) { id } }',
      {},
      auth(),
    );
    expect(dup.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "input.name",
    });
    const badName = await api.gql(
      'mutation { addSource(input: { name: "Bad Name", kind: VALVE_UDP, host: "x" }) { id } }',
      {},
      auth(),
    );
    expect(badName.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "input.name",
    });

    const upd = await api.gql(
      "mutation($id: Int!) { updateSource(id: $id, input: { intervalMs: 600000, regions: [3, 255], enabled: false }) { intervalMs regions enabled } }",
      { id: sourceId },
      auth(),
    );
    expect(upd.data).toEqual({
      updateSource: { intervalMs: 600000, regions: [3, 255], enabled: false },
    });
    const badUpd = await api.gql(
      "mutation($id: Int!) { updateSource(id: $id, input: { regions: [256] }) { id } }",
      { id: sourceId },
      auth(),
    );
    expect(badUpd.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "input.regions",
    });

    const list = await api.gql<{
      sources: Array<{
        name: string;
        crawls: Array<{
          found: number;
          answered: number;
          failed: number;
          partial: boolean;
          runs: unknown[];
        }>;
      }>;
    }>(
      "{ sources { name kind crawls(first: 3) { found answered failed partial error runs { region found answered } source { name } } } }",
    );
    expect(list.data?.sources.map((s) => s.name)).toEqual(["sim", "steam-csgo"]);
    expect(list.data?.sources[0]?.crawls[0]).toMatchObject({
      found: 40,
      answered: 35,
      failed: 5,
      partial: false,
    });
    expect(list.data?.sources[0]?.crawls[0]?.runs).toHaveLength(2);
    const crawls = await api.gql<{ crawls: unknown[] }>(
      "query($s: Int) { crawls(sourceId: $s) { id source { name } } }",
      { s: seed.sourceId },
    );
    expect(crawls.data?.crawls).toEqual([{ id: seed.crawlId, source: { name: "sim" } }]);

    expect(
      (await api.gql("mutation($id: Int!) { removeSource(id: $id) }", { id: sourceId }, auth()))
        .data,
    ).toEqual({ removeSource: true });
    const gone = await api.gql(
      "mutation($id: Int!) { removeSource(id: $id) }",
      { id: sourceId },
      auth(),
    );
    expect(gone.errors?.[0]?.extensions?.["code"]).toBe("NOT_FOUND");
  });

  it("blockRange / unblockRange store the network and are idempotent", async () => {
    const b = await api.gql<{ blockRange: { cidr: string } }>(
      'mutation { blockRange(cidr: "203.0.113.77/24", reason: "abuse") { cidr reason } }',
      {},
      auth(),
    );
    expect(b.data).toEqual({ blockRange: { cidr: "203.0.113.0/24", reason: "abuse" } });
    await api.gql('mutation { blockRange(cidr: "203.0.113.0/24") { id } }', {}, auth());
    const list = await api.gql("{ blockedRanges { cidr reason } }");
    expect(list.data).toEqual({ blockedRanges: [{ cidr: "203.0.113.0/24", reason: "abuse" }] });
    expect(
      (await api.gql('mutation { blockRange(cidr: "203.0.113.0/33") { id } }', {}, auth()))
        .errors?.[0]?.extensions,
    ).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "cidr" });
    expect(
      (await api.gql('mutation { unblockRange(cidr: "203.0.113.0/24") }', {}, auth())).data,
    ).toEqual({ unblockRange: true });
    expect(
      (await api.gql('mutation { unblockRange(cidr: "203.0.113.0/24") }', {}, auth())).data,
    ).toEqual({ unblockRange: false });
  });

  it("purgeDelisted deletes delisted servers listed last before the time, with their history", async () => {
    const delisted = await counting.db.gameServer.count({ where: { status: "DELISTED" } });
    expect(delisted).toBeGreaterThan(0);
    const future = await api.gql(
      "mutation($t: DateTimeISO!) { purgeDelisted(olderThan: $t) }",
      { t: new Date(Date.now() + 3_600_000).toISOString() },
      auth(),
    );
    expect(future.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      argumentName: "olderThan",
    });
    const none = await api.gql(
      "mutation($t: DateTimeISO!) { purgeDelisted(olderThan: $t) }",
      { t: new Date(seed.now.getTime() - 1000).toISOString() },
      auth(),
    );
    expect(none.data).toEqual({ purgeDelisted: 0 });
    const all = await api.gql(
      "mutation($t: DateTimeISO!) { purgeDelisted(olderThan: $t) }",
      { t: new Date().toISOString() },
      auth(),
    );
    expect(all.data).toEqual({ purgeDelisted: delisted });
    expect(await counting.db.gameServer.count({ where: { status: "DELISTED" } })).toBe(0);
  });

  it("removeServer deletes; unknown ids are NOT_FOUND", async () => {
    expect(
      (await api.gql("mutation($id: Int!) { removeServer(id: $id) }", { id: id(4) }, auth())).data,
    ).toEqual({ removeServer: true });
    for (const q of [
      "mutation { removeServer(id: 999999) }",
      "mutation { requeryServer(id: 999999) }",
      "mutation { setServerHidden(id: 999999, hidden: true) { id } }",
      "mutation { clearFakeFlag(id: 999999) { id } }",
      "mutation { triggerCrawl(sourceId: 999999) }",
      "mutation { updateSource(id: 999999, input: {}) { id } }",
    ]) {
      const res = await api.gql(q, {}, auth());
      expect(res.errors?.[0]?.extensions?.["code"]).toBe("NOT_FOUND");
    }
  });
});

describe("no N+1 on sources", () => {
  it("sources with their crawls, runs and back-links is a fixed number of statements", async () => {
    const db = counting.db;
    for (let k = 0; k < 4; k++) {
      const src = await db.masterSource.create({
        data: { name: `n1-${k}`, kind: "ADDRESS_LIST", host: "127.0.0.1" },
      });
      for (let c = 0; c < 3; c++) {
        const crawl = await db.crawl.create({
          data: {
            key: `n1-${k}-${c}`,
            sourceId: src.id,
            startedAt: new Date(Date.now() - c * 60_000),
          },
        });
        await db.crawlRun.create({ data: { crawlId: crawl.id, region: -1 } });
      }
    }
    counting.reset();
    const res = await api.gql<{ sources: Array<{ crawls: Array<{ runs: unknown[] }> }> }>(
      "{ sources { name crawls(first: 2) { id runs { region } source { name } } } }",
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.sources.filter((s) => s.crawls.length === 2)).toHaveLength(4);
    // sources, latest crawl ids per source, those crawls, their runs, their sources
    expect(counting.statements().length).toBeLessThanOrEqual(5);
  });
});

describe("without a queue", () => {
  it("requeryServer and triggerCrawl answer false", async () => {
    const plain = await startTestApi({ db: counting.db });
    try {
      expect(
        (await plain.gql("mutation($id: Int!) { requeryServer(id: $id) }", { id: id(5) }, auth()))
          .data,
      ).toEqual({ requeryServer: false });
      expect(
        (
          await plain.gql(
            "mutation($id: Int!) { triggerCrawl(sourceId: $id) }",
            { id: seed.sourceId },
            auth(),
          )
        ).data,
      ).toEqual({ triggerCrawl: false });
    } finally {
      await plain.close();
    }
  });
});
