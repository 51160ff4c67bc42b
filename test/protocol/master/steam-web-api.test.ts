import { runMaster } from "../../../src/cli/commands/master";
import {
  listSteamWebApi,
  parseRetryAfterMs,
  readSteamWebApiRecord,
  formatAddress,
} from "../../../src/protocol";
import type { SimServerSpec } from "../../../src/simulator/fleet-spec";
import { type SimSteamWebApi, startSimSteamWebApi } from "../../../src/simulator/steam-web-api";
import { makeListTestFleet } from "../../helpers/master-fleet";

const KEY = "TESTKEY0123456789ABCDEF";
const idsOf = (list: Array<{ address: { host: string; port: number } }>): string[] =>
  list.map((s) => formatAddress(s.address)).sort();
const fleetIds = (specs: readonly SimServerSpec[]): string[] =>
  specs.map((s) => `${s.host}:${s.queryPort}`).sort();

function uniformFleet(
  count: number,
  place: (i: number) => { host: string; queryPort: number },
  name: (i: number) => string,
): SimServerSpec[] {
  const template = makeListTestFleet(1)[0] as SimServerSpec;
  return Array.from({ length: count }, (_, i) => ({
    ...template,
    ...place(i),
    state: { ...template.state, name: name(i), map: "de_dust2", players: 3, environment: "l" },
  }));
}

describe("Steam Web API listing against a local endpoint that caps and rate-limits", () => {
  let api: SimSteamWebApi;
  afterEach(async () => api?.close());

  it("splits capped queries (empty, linux, map) until every server is listed once", async () => {
    const fleet = makeListTestFleet(3000);
    api = await startSimSteamWebApi({ fleet, key: KEY, maxPerCall: 200 });
    const result = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      limitPerCall: 200,
      pacing: false,
    });
    expect(result.complete).toBe(true);
    expect(result.cappedFilters).toEqual([]);
    expect(idsOf(result.servers)).toEqual(fleetIds(fleet));
    expect(api.stats.filters).toEqual(
      expect.arrayContaining([
        "",
        "\\noplayers\\1",
        "\\empty\\1",
        "\\empty\\1\\linux\\1",
        "\\empty\\1\\nor\\1\\linux\\1",
      ]),
    );
    expect(api.stats.filters.some((f) => f.includes("\\map\\"))).toBe(true);
  });

  it("keeps the caller filter in every part", async () => {
    const fleet = makeListTestFleet(3000);
    api = await startSimSteamWebApi({ fleet, key: KEY, maxPerCall: 150 });
    const result = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      filter: "\\appid\\730",
      limitPerCall: 150,
      pacing: false,
    });
    expect(result.complete).toBe(true);
    expect(idsOf(result.servers)).toEqual(fleetIds(fleet.filter((s) => s.state.appId === 730)));
    expect(api.stats.filters.every((f) => f.startsWith("\\appid\\730"))).toBe(true);
  });

  it("goes down to name prefixes when one map is capped", async () => {
    const fleet = uniformFleet(
      1200,
      (i) => ({ host: `127.2.${i >> 8}.${i & 255}`, queryPort: 27015 }),
      (i) => `${"abcdefghij"[i % 10]}${"klmnopqrst"[(i >> 4) % 10]} server ${i}`,
    );
    api = await startSimSteamWebApi({ fleet, key: KEY, maxPerCall: 100 });
    const result = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      limitPerCall: 100,
      pacing: false,
    });
    expect(result.complete).toBe(true);
    expect(idsOf(result.servers)).toEqual(fleetIds(fleet));
    expect(api.stats.filters.some((f) => f.includes("\\name_match\\"))).toBe(true);
  });

  it("goes down to \\gameaddr\\ when names do not split, and reports what it cannot split", async () => {
    const fleet = uniformFleet(
      600,
      (i) => ({ host: `127.3.0.${1 + (i % 6)}`, queryPort: 20000 + i }),
      () => "same",
    );
    api = await startSimSteamWebApi({ fleet, key: KEY, maxPerCall: 150 });
    const result = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      limitPerCall: 150,
      pacing: false,
    });
    expect(result.complete).toBe(true);
    expect(idsOf(result.servers)).toEqual(fleetIds(fleet));
    expect(api.stats.filters.some((f) => f.includes("\\gameaddr\\127.3.0."))).toBe(true);
    await api.close();

    const farm = uniformFleet(
      300,
      (i) => ({ host: "127.3.1.1", queryPort: 20000 + i }),
      () => "same",
    );
    api = await startSimSteamWebApi({ fleet: farm, key: KEY, maxPerCall: 100 });
    const capped = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      limitPerCall: 100,
      pacing: false,
    });
    expect(capped.complete).toBe(false);
    expect(capped.cappedFilters.some((f) => f.includes("\\gameaddr\\127.3.1.1"))).toBe(true);
    expect(capped.servers).toHaveLength(100);
  });

  it("honours 429 Retry-After and still completes", async () => {
    const fleet = makeListTestFleet(800);
    api = await startSimSteamWebApi({
      fleet,
      key: KEY,
      maxPerCall: 300,
      rateLimit: { callsPerWindow: 3, windowMs: 150 },
    });
    const result = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      limitPerCall: 300,
      pacing: false,
      maxRateLimitedRetries: 20,
    });
    expect(result.complete).toBe(true);
    expect(idsOf(result.servers)).toEqual(fleetIds(fleet));
    expect(api.stats.rateLimited).toBeGreaterThan(0);
  });

  it("stops with RATE_LIMITED when Retry-After is longer than it will wait", async () => {
    api = await startSimSteamWebApi({
      fleet: makeListTestFleet(500),
      key: KEY,
      maxPerCall: 100,
      rateLimit: { callsPerWindow: 1, windowMs: 60_000 },
    });
    const result = await listSteamWebApi({
      key: KEY,
      baseUrl: api.baseUrl,
      limitPerCall: 100,
      pacing: false,
      maxRetryAfterMs: 1000,
    });
    expect(result.complete).toBe(false);
    expect(result.stoppedBy?.code).toBe("RATE_LIMITED");
    expect(result.servers).toHaveLength(100);
  });

  it("reports a refused key without ever showing it", async () => {
    api = await startSimSteamWebApi({ fleet: makeListTestFleet(10), key: KEY });
    const result = await listSteamWebApi({
      key: "WRONG-SECRET-KEY",
      baseUrl: api.baseUrl,
      pacing: false,
    });
    expect(result.complete).toBe(false);
    expect(result.stoppedBy?.code).toBe("UNEXPECTED_RESPONSE");
    expect(JSON.stringify(result.stoppedBy)).not.toContain("WRONG-SECRET-KEY");
    expect(result.stoppedBy?.message).toContain("403");
  });

  it("gsindex master --steam-web-api reads the key and URL from its environment and prints JSON", async () => {
    const fleet = makeListTestFleet(700);
    api = await startSimSteamWebApi({ fleet, key: KEY, maxPerCall: 10_000 });
    let out = "";
    let err = "";
    const code = await runMaster(
      ["--steam-web-api", "--json", "--rate", "0", "--filter", "\\gamedir\\tf"],
      {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (err += t) },
      },
      { steamWebApiKey: KEY, steamWebApiUrl: api.baseUrl },
    );
    expect(code).toBe(0);
    const json = JSON.parse(out) as { servers: string[]; complete: boolean; resumeFrom: null };
    expect(json.complete).toBe(true);
    expect(json.resumeFrom).toBeNull();
    expect(json.servers.sort()).toEqual(fleetIds(fleet.filter((s) => s.state.folder === "tf")));
    expect(out + err).not.toContain(KEY);
    const missing = await runMaster(
      ["--steam-web-api"],
      { stdout: { write: () => undefined }, stderr: { write: (t: string) => (err += t) } },
      {},
    );
    expect(missing).toBe(2);
    expect(err).toContain("STEAM_WEB_API_KEY");
  });
});

describe("Steam Web API records", () => {
  it("map to ServerStatus leniently and flag SDR fake IPs", () => {
    const server = readSteamWebApiRecord({
      addr: "169.254.10.20:27015",
      gameport: 27016,
      steamid: "90071992547409920",
      name: "Fake IP server",
      appid: 730,
      gamedir: "csgo",
      version: "1.38.7.9",
      product: "csgo",
      region: -1,
      players: "12",
      max_players: 24,
      bots: 0,
      map: "de_inferno",
      secure: true,
      dedicated: true,
      os: "l",
      gametype: "secure,valve_ds",
    });
    expect(server).toMatchObject({
      address: { host: "169.254.10.20", port: 27015 },
      gamePort: 27016,
      region: -1,
      sdrFakeIp: true,
    });
    expect(server?.status).toMatchObject({
      protocol: "source",
      name: "Fake IP server",
      map: "de_inferno",
      folder: "csgo",
      appId: 730,
      players: 12,
      maxPlayers: 24,
      bots: 0,
      vacSecured: true,
      dedicated: true,
      os: "linux",
      version: "1.38.7.9",
      keywords: ["secure", "valve_ds"],
      gamePort: 27016,
      steamId: "90071992547409920",
      passwordProtected: null,
      playerList: [],
      rules: [],
    });
    expect(readSteamWebApiRecord({ addr: "nonsense" })).toBeNull();
    expect(readSteamWebApiRecord(null)).toBeNull();
    expect(readSteamWebApiRecord({ addr: "1.2.3.4:27015" })?.status).toMatchObject({
      name: "",
      players: 0,
      os: null,
      gamePort: null,
    });
  });

  it("parses Retry-After in seconds and as a date", () => {
    expect(parseRetryAfterMs("3")).toBe(3000);
    expect(parseRetryAfterMs("0.25")).toBe(250);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfterMs("soon")).toBeNull();
    expect(parseRetryAfterMs(null)).toBeNull();
  });
});
