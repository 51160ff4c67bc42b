import dgram from "node:dgram";
import {
  MasterFilter as F,
  buildMasterFilter,
  parseMasterFilter,
  formatAddress,
  listValveMaster,
} from "../../../src/protocol";
import { type SimValveMaster, startSimValveMaster } from "../../../src/simulator/master";
import { applyMasterFilter } from "../../../src/simulator/master-filter-match";
import { makeListTestFleet } from "../../helpers/master-fleet";

const fleet = makeListTestFleet(1500);
const ids = (list: Array<{ host: string; port: number }>): string[] =>
  list.map(formatAddress).sort();
const fleetIds = (specs: typeof fleet): string[] =>
  specs.map((s) => `${s.host}:${s.queryPort}`).sort();

describe("listValveMaster against the simulated master", () => {
  let master: SimValveMaster;
  afterEach(async () => master?.close());

  it("lists every server once for region all (0xFF repeats the world; dedup keeps one of each)", async () => {
    master = await startSimValveMaster({ fleet, rateLimit: false });
    const batches: number[] = [];
    const result = await listValveMaster({
      ...master.address,
      region: "all",
      pacing: false,
      timeoutMs: 500,
      onBatch: (b) => {
        batches.push(b.length);
      },
    });
    expect(result.complete).toBe(true);
    expect(result.resumeFrom).toBeNull();
    expect(result.servers).toHaveLength(fleet.length);
    expect(ids(result.servers)).toEqual(fleetIds(fleet));
    expect(batches.reduce((a, b) => a + b, 0)).toBe(fleet.length);
  });

  it("hands pages to a consumer that writes them, asking for the next only once it is done (collect: false)", async () => {
    master = await startSimValveMaster({ fleet, rateLimit: false });
    const handed: string[] = [];
    const requestsAtPage: number[] = [];
    const result = await listValveMaster({
      ...master.address,
      region: "rest",
      pacing: false,
      timeoutMs: 500,
      collect: false,
      onBatch: async (page) => {
        requestsAtPage.push(master.stats.requests);
        await new Promise((resolve) => setTimeout(resolve, 20));
        // Held back while the consumer wrote: no request for the next page went out meanwhile.
        expect(master.stats.requests).toBe(requestsAtPage[requestsAtPage.length - 1]);
        handed.push(...page.map(formatAddress));
      },
    });
    expect(result.complete).toBe(true);
    expect(result.servers).toEqual([]);
    expect(handed.sort()).toEqual(fleetIds(fleet));
    expect(requestsAtPage).toEqual(requestsAtPage.map((_n, i) => i + 1));
  });

  it("ends the listing with what the consumer throws, without asking for another page", async () => {
    master = await startSimValveMaster({ fleet, rateLimit: false });
    const failure = new Error("the write failed");
    await expect(
      listValveMaster({
        ...master.address,
        region: "rest",
        pacing: false,
        timeoutMs: 500,
        onBatch: () => Promise.reject(failure),
      }),
    ).rejects.toBe(failure);
    expect(master.stats.requests).toBe(1);
  });

  it("lists one region with a nested filter exactly as the filter selects", async () => {
    master = await startSimValveMaster({ fleet, rateLimit: false });
    const nodes = [F.gamedir("cstrike"), F.nor(F.map("de_dust2"), F.and(F.linux(), F.notEmpty()))];
    const result = await listValveMaster({
      ...master.address,
      region: "europe",
      filter: nodes,
      pacing: false,
      timeoutMs: 500,
    });
    const expected = applyMasterFilter(
      fleet.filter((s) => s.region === 3),
      parseMasterFilter(buildMasterFilter(nodes)),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(fleet.filter((s) => s.region === 3).length);
    expect(ids(result.servers)).toEqual(fleetIds(expected));
  });

  it("stops short when the master goes silent and resumes from where it stopped", async () => {
    master = await startSimValveMaster({
      fleet,
      rateLimit: { packetsPerWindow: 3, windowMs: 60_000, silenceMs: 60_000 },
    });
    const first = await listValveMaster({
      ...master.address,
      region: "rest",
      pacing: false,
      timeoutMs: 100,
      retries: 1,
    });
    expect(first.complete).toBe(false);
    expect(first.stoppedBy?.code).toBe("TIMEOUT");
    expect(first.servers).toHaveLength(3 * 231);
    expect(first.resumeRegion).toBe(0xff);
    expect(first.resumeFrom).toEqual(first.servers[first.servers.length - 1]);
    await master.close();
    master = await startSimValveMaster({ fleet, rateLimit: false });
    const rest = await listValveMaster({
      ...master.address,
      region: "rest",
      seed: first.resumeFrom ?? undefined,
      pacing: false,
      timeoutMs: 500,
    });
    expect(rest.complete).toBe(true);
    expect(ids([...first.servers, ...rest.servers])).toEqual(fleetIds(fleet));
  });

  it("rides out rate-limit silences with re-sends and still lists everything once", async () => {
    master = await startSimValveMaster({
      fleet,
      rateLimit: { packetsPerWindow: 4, windowMs: 150, silenceMs: 150 },
    });
    const result = await listValveMaster({
      ...master.address,
      region: "all",
      pacing: false,
      timeoutMs: 80,
      retries: 10,
    });
    expect(result.complete).toBe(true);
    expect(ids(result.servers)).toEqual(fleetIds(fleet));
    expect(master.stats.rateLimited).toBeGreaterThan(0);
  });

  it("returns a partial result on abort and ignores packets from other addresses", async () => {
    const silent = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", resolve));
    const intruder = dgram.createSocket("udp4");
    silent.on("message", (_msg, remote) =>
      intruder.send(
        Buffer.from("ffffffff660a0102030400500000000000000", "hex"),
        remote.port,
        remote.address,
      ),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await listValveMaster({
      host: "127.0.0.1",
      port: silent.address().port,
      region: 0,
      pacing: false,
      timeoutMs: 5000,
      signal: controller.signal,
    });
    expect(result).toMatchObject({
      complete: false,
      servers: [],
      resumeRegion: 0,
      resumeFrom: { host: "0.0.0.0", port: 0 },
    });
    expect(result.stoppedBy?.code).toBe("ABORTED");
    silent.close();
    intruder.close();
  });

  it("refuses unknown regions", async () => {
    await expect(listValveMaster({ host: "127.0.0.1", port: 9, region: 9 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(
      listValveMaster({
        host: "127.0.0.1",
        port: 9,
        region: 0,
        filter: "\\map\\" + "x".repeat(200),
      }),
    ).rejects.toMatchObject({ code: "FILTER_TOO_LONG" });
  });
});
