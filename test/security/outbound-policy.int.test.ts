/**
 * Issue 12.5: every outbound contact of a list source follows the address policy. Nothing here may leave
 * loopback: the refused cases run under tripwires on every way out (UDP send, TCP/HTTP connect, fetch, DNS)
 * that count and throw instead of sending, so even the code before the fix could not send a packet, and the
 * tests assert the typed refusal AND that no tripwire was reached. Host names resolve through an injected
 * lookup, never DNS.
 */
import dgram from "node:dgram";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { LookupAll } from "../../src/crawler/outbound-guard";
import type { ListingResult, SourceRecord } from "../../src/crawler/list-source";
import { createListSourceFactory } from "../../src/crawler/sources";
import { runCrawlOnce } from "../../src/crawler/crawl-once";
import { ManagementServer } from "../../src/management/management-server";
import { loadConfig } from "../../src/shared/config";
import { silentLogger } from "../../src/shared/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { waitFor } from "../helpers/wait-for";

jest.setTimeout(30_000);

const names: Record<string, string[]> = {
  "master.test": ["10.0.0.1"],
  // A name answering a public address AND a private one: the socket must never get to pick the private one.
  "rebind.test": ["8.8.8.8", "192.168.77.7"],
  "list.test": ["127.0.0.1"],
};
const lookups: string[] = [];
const testLookup: LookupAll = async (name) => {
  lookups.push(name);
  const found = names[name];
  if (!found) throw new Error(`no such test name ${name}`);
  return found.map((address) => ({ address, family: net.isIP(address) }));
};

let nextId = 1;
const source = (
  kind: SourceRecord["kind"],
  host: string,
  port: number | null,
  options: unknown = {},
): SourceRecord => ({
  id: nextId++,
  name: `s${nextId}`,
  kind,
  host,
  port,
  filter: "",
  regions: [0],
  intervalMs: 60_000,
  enabled: true,
  options,
});

/** Tripwires on every way out: each counts and throws, so nothing is ever sent from this block. */
function tripwires(): { reached: string[] } {
  const reached: string[] = [];
  const trip =
    (what: string) =>
    (..._args: unknown[]): never => {
      reached.push(what);
      throw new Error(`tripwire: ${what}`);
    };
  jest.spyOn(dgram.Socket.prototype, "send").mockImplementation(trip("udp send"));
  // The test's own PostgreSQL connections (loopback or a Unix socket) pass; anything else trips.
  const connect = net.Socket.prototype.connect;
  jest.spyOn(net.Socket.prototype, "connect").mockImplementation(function (
    this: net.Socket,
    ...args: unknown[]
  ) {
    // net.connect hands Socket#connect its normalized arguments as one array.
    const given = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
    const first = given[0] as { host?: string; path?: string } | number | string;
    const host =
      typeof first === "object" && first !== null
        ? first.host
        : typeof first === "number"
          ? (given[1] as string | undefined)
          : undefined;
    const local =
      typeof first === "string" ||
      (typeof first === "object" && first !== null && first.path !== undefined) ||
      host === "127.0.0.1" ||
      host === "localhost" ||
      host === "::1";
    if (!local) trip(`tcp connect ${String(host)}`)();
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect);
  jest.spyOn(http, "request").mockImplementation(trip("http request"));
  jest.spyOn(https, "request").mockImplementation(trip("https request"));
  jest.spyOn(globalThis, "fetch").mockImplementation(trip("fetch"));
  // Lookups of IP literals and 'localhost' (the test's own database connection may make them) pass; names trip.
  const lookup = dns.lookup;
  jest.spyOn(dns, "lookup").mockImplementation(function (this: unknown, ...args: unknown[]) {
    const name = String(args[0]);
    if (net.isIP(name) === 0 && name !== "localhost") trip(`dns lookup ${name}`)();
    return (lookup as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof lookup);
  jest.spyOn(dns.promises, "lookup").mockImplementation(trip("dns lookup"));
  return { reached };
}

/** What a listing said, whether it threw (Valve master, management) or returned a partial result. */
async function outcome(run: Promise<ListingResult>): Promise<string> {
  try {
    const result = await run;
    expect(result.partial).toBe(true);
    return result.error ?? "";
  } catch (err) {
    expect(err).toMatchObject({ code: "ADDRESS_REFUSED" });
    return (err as Error).message;
  }
}

describe("list sources follow the address policy (issue 12.5)", () => {
  afterEach(() => jest.restoreAllMocks());
  const config = loadConfig({ STEAM_WEB_API_KEY: "secret-key", MASTER_TIMEOUT_MS: "200" });
  const split = { region: 0, split: "" };

  it("refuses private, multicast, link-local and rebinding addresses of every kind of source before any socket exists", async () => {
    const { reached } = tripwires();
    const factory = createListSourceFactory(config, {}, { lookup: testLookup });
    const cases: Array<[SourceRecord, RegExp]> = [
      [source("VALVE_UDP", "10.0.0.1", 27011), /10\.0\.0\.1 is not a public address/],
      [source("VALVE_UDP", "224.0.0.1", 27011), /224\.0\.0\.1 is not a public address/],
      [
        source("VALVE_UDP", "169.254.1.1", 27011),
        /169\.254\.1\.1 is a Steam Datagram Relay address/,
      ],
      [source("VALVE_UDP", "::ffff:10.0.0.1", 27011), /not a public address/],
      [
        source("VALVE_UDP", "master.test", 27011),
        /master\.test resolves to 10\.0\.0\.1, which is not a public address/,
      ],
      [source("VALVE_UDP", "rebind.test", 27011), /rebind\.test resolves to 192\.168\.77\.7/],
      [source("VALVE_UDP", "fe80::1%lo", 27011), /not an IP address or host name/],
      [source("MANAGEMENT", "192.168.77.7", 51963), /192\.168\.77\.7 is not a public address/],
      [source("MANAGEMENT", "127.0.0.1", 12345), /127\.0\.0\.1 is not a public address/],
      [
        source("ADDRESS_LIST", "", null, { quake3Master: "224.0.0.1:27950" }),
        /224\.0\.0\.1 is not a public address/,
      ],
      [
        source("ADDRESS_LIST", "", null, { quake3Master: "master.test:27950" }),
        /resolves to 10\.0\.0\.1/,
      ],
      [
        source("ADDRESS_LIST", "", null, { url: "http://169.254.1.1/list.txt" }),
        /169\.254\.1\.1 is a Steam Datagram Relay address/,
      ],
      [
        source("ADDRESS_LIST", "", null, { url: "https://rebind.test/list.txt" }),
        /rebind\.test resolves to 192\.168\.77\.7/,
      ],
      [source("STEAM_WEB_API", "10.0.0.1", null), /10\.0\.0\.1 is not a public address/],
      [
        source("STEAM_WEB_API", "api.steampowered.com", null, {
          baseUrl: "http://192.168.77.7:8080",
        }),
        /192\.168\.77\.7 is not a public address/,
      ],
    ];
    for (const [record, reason] of cases) {
      const said = await outcome(factory(record).list(split, AbortSignal.timeout(5000)));
      expect(said).toMatch(
        /^(Quake 3 master .*: |cannot read the address list .*: |ADDRESS_REFUSED: )?address policy: /,
      );
      expect(said).toMatch(reason);
      expect(said).not.toContain("secret-key");
    }
    expect(reached).toEqual([]);
    expect(lookups).toEqual(expect.arrayContaining(["master.test", "rebind.test"]));
  });

  it("reaches an allowed address through the checked IP, the name resolved once by the injected lookup", async () => {
    const seen: Array<{ host: string | undefined; from: string | undefined }> = [];
    const server = http.createServer((req, res) => {
      seen.push({ host: req.headers.host, from: req.socket.remoteAddress });
      res.end("quake3 203.0.113.7:27960\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    lookups.length = 0;
    try {
      const allowed = createListSourceFactory(
        loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }),
        {},
        { lookup: testLookup },
      );
      const listing = await allowed(
        source("ADDRESS_LIST", "", null, { url: `http://list.test:${port}/list.txt` }),
      ).list(split, AbortSignal.timeout(5000));
      expect(listing).toEqual({
        servers: [{ host: "203.0.113.7", queryPort: 27960, protocol: "quake3" }],
        partial: false,
      });
      expect(seen).toEqual([{ host: `list.test:${port}`, from: "127.0.0.1" }]);
      expect(lookups).toEqual(["list.test"]);
      // Without the allow-list the same name is refused: loopback is not public.
      const strict = createListSourceFactory(loadConfig({}), {}, { lookup: testLookup });
      expect(
        await outcome(
          strict(
            source("ADDRESS_LIST", "", null, { url: `http://list.test:${port}/list.txt` }),
          ).list(split, AbortSignal.timeout(5000)),
        ),
      ).toMatch(/list\.test resolves to 127\.0\.0\.1/);
      expect(seen).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  describe("crawls of configured sources", () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await createTestDatabase();
    });
    afterAll(async () => t?.drop());

    it("fails its crawl with the reason, and sends nothing", async () => {
      const row = await t.db.masterSource.create({
        data: {
          name: "private-master",
          kind: "VALVE_UDP",
          host: "10.0.0.1",
          port: 27011,
          regions: [0],
        },
      });
      const { reached } = tripwires();
      const totals = await runCrawlOnce({
        config: loadConfig({ MASTER_TIMEOUT_MS: "200" }),
        db: t.db,
        logger: silentLogger,
        sourceId: row.id,
      });
      jest.restoreAllMocks();
      expect(totals).toMatchObject({ finished: true, partial: true, listed: 0 });
      const runs = await t.db.crawlRun.findMany({ where: { crawl: { sourceId: row.id } } });
      expect(runs.map((r) => r.error)).toEqual([
        expect.stringMatching(/address policy: 10\.0\.0\.1 is not a public address/),
      ]);
      expect(reached).toEqual([]);
    });

    it("stores a registered host name as given and never looks it up (issue 12.3)", async () => {
      const ms = await ManagementServer.start({ host: "127.0.0.1", port: 0 });
      const client = net.connect(ms.address.port, "127.0.0.1");
      try {
        await new Promise((resolve) => client.once("connect", resolve));
        client.write(
          JSON.stringify({
            command: "msRegisterGameServer",
            content: { serverName: "Named", serverAddress: "bomber.example.org", serverPort: 4000 },
          }) + "\n",
        );
        await waitFor("the registration under a host name", () => ms.list().length > 0, {
          timeoutMs: 10_000,
          intervalMs: 20,
        });
        const row = await t.db.masterSource.create({
          data: {
            name: "named-registrations",
            kind: "MANAGEMENT",
            host: "127.0.0.1",
            port: ms.address.port,
          },
        });
        const { reached } = tripwires();
        const totals = await runCrawlOnce({
          config: loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }),
          db: t.db,
          logger: silentLogger,
          sourceId: row.id,
        });
        jest.restoreAllMocks();
        expect(totals).toMatchObject({ finished: true, listed: 1, queried: 0 });
        expect(
          await t.db.gameServer.findFirst({
            where: { address: "bomber.example.org", queryPort: 4000 },
          }),
        ).toMatchObject({ managementRegistered: true, notQueryable: true });
        expect(reached).toEqual([]);
      } finally {
        client.destroy();
        await ms.close();
      }
    });

    it("applies the blocked ranges to a source's contacts too, allow-list or not", async () => {
      const row = await t.db.masterSource.create({
        data: {
          name: "blocked-master",
          kind: "VALVE_UDP",
          host: "127.0.0.9",
          port: 27011,
          regions: [0],
        },
      });
      await t.db
        .$executeRaw`INSERT INTO blocked_range (cidr, reason) VALUES ('127.0.0.0/24'::inet, 'test')`;
      const { reached } = tripwires();
      const totals = await runCrawlOnce({
        config: loadConfig({ MASTER_TIMEOUT_MS: "200", ADDRESS_ALLOW_LIST: "127.0.0.0/8" }),
        db: t.db,
        logger: silentLogger,
        sourceId: row.id,
      });
      jest.restoreAllMocks();
      expect(totals).toMatchObject({ finished: true, partial: true, listed: 0 });
      const runs = await t.db.crawlRun.findMany({ where: { crawl: { sourceId: row.id } } });
      expect(runs.map((r) => r.error)).toEqual([
        expect.stringMatching(/address policy: 127\.0\.0\.9 is in a blocked range/),
      ]);
      expect(reached).toEqual([]);
    });
  });
});
