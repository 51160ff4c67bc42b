import { createAddressListSource } from "../../../src/crawler/sources/address-list-source";
import type { SourceRecord } from "../../../src/crawler/list-source";
import {
  decodeQuake3MasterResponse,
  encodeQuake3MasterRequest,
  encodeQuake3MasterResponse,
  listQuake3Master,
  UdpTransport,
} from "../../../src/protocol";
import { startSimQuake3Master } from "../../../src/simulator/quake3-master";
import type { SimServerSpec } from "../../../src/simulator/fleet-spec";
import { loopbackGuard } from "../../helpers/loopback-guard";
import { simSpec } from "../../helpers/sim";

describe("Quake 3 master codec", () => {
  it("encodes getservers the way ioquake3 and dpmaster expect", () => {
    expect(encodeQuake3MasterRequest({ protocolVersion: 68 }).toString("latin1")).toBe(
      "\xff\xff\xff\xffgetservers 68 empty full",
    );
    expect(
      encodeQuake3MasterRequest({
        protocolVersion: 3,
        gameName: "Xonotic",
        includeEmptyAndFull: false,
      }).toString("latin1"),
    ).toBe("\xff\xff\xff\xffgetservers Xonotic 3");
    expect(
      encodeQuake3MasterRequest({
        protocolVersion: 3,
        gameName: "Xonotic",
        extended: true,
      }).toString("latin1"),
    ).toBe("\xff\xff\xff\xffgetserversExt Xonotic 3 empty full ipv4 ipv6");
    expect(() => encodeQuake3MasterRequest({ protocolVersion: 68, gameName: "a b" })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
  });

  it('reads records by size: a 0x5C address byte and an address starting with "EOT" are addresses', () => {
    const servers = [
      { host: "92.92.92.92", port: 23644 },
      { host: "69.79.84.1", port: 27960 },
      { host: "1.2.3.4", port: 0x5c5c },
    ];
    const [only] = encodeQuake3MasterResponse(servers);
    expect(decodeQuake3MasterResponse(only!)).toEqual({ servers, end: true });
    const split = encodeQuake3MasterResponse(servers, { perDatagram: 2 });
    expect(split.map(decodeQuake3MasterResponse)).toEqual([
      { servers: servers.slice(0, 2), end: false },
      { servers: servers.slice(2), end: true },
    ]);
  });

  it("reads the extended (IPv6) records", () => {
    const servers = [
      { host: "2001:db8::1", port: 26000 },
      { host: "203.0.113.9", port: 26001 },
    ];
    const [only] = encodeQuake3MasterResponse(servers, { extended: true });
    expect(decodeQuake3MasterResponse(only!)).toEqual({ servers, end: true });
  });

  it("reports truncated, foreign and malformed datagrams", () => {
    const [only] = encodeQuake3MasterResponse([{ host: "1.2.3.4", port: 5 }]);
    expect(() => decodeQuake3MasterResponse(only!.subarray(0, 4 + 18 + 3))).toThrow(
      expect.objectContaining({ code: "TRUNCATED" }),
    );
    expect(() =>
      decodeQuake3MasterResponse(Buffer.from("\xff\xff\xff\xffstatusResponse\n", "latin1")),
    ).toThrow(expect.objectContaining({ code: "UNEXPECTED_RESPONSE" }));
    expect(() =>
      decodeQuake3MasterResponse(Buffer.from("\xff\xff\xff\xffgetserversResponse!", "latin1")),
    ).toThrow(expect.objectContaining({ code: "MALFORMED" }));
  });
});

describe("listing a simulated Quake 3 master", () => {
  let transport: UdpTransport;
  const fleet: SimServerSpec[] = Array.from({ length: 120 }, (_, i) => ({
    ...simSpec({}, { index: i }),
    queryPort: 30000 + i,
    protocol: i % 3 === 0 ? "source" : "quake3",
  }));
  const quake3 = fleet
    .filter((s) => s.protocol === "quake3")
    .map((s) => ({ host: s.host, port: s.queryPort }));
  beforeAll(() => {
    transport = new UdpTransport({ bindAddress4: "127.0.0.1", bindAddress6: "::1" });
  });
  afterAll(() => transport.close());

  it("collects every datagram until \\EOT", async () => {
    const master = await startSimQuake3Master({ fleet, perDatagram: 25 });
    try {
      const result = await listQuake3Master(master.address, {
        protocolVersion: 68,
        transport,
        timeoutMs: 1000,
      });
      expect(result.complete).toBe(true);
      expect(result.servers).toEqual(quake3);
    } finally {
      await master.close();
    }
  });

  it("feeds an address-list source (options.quake3Master)", async () => {
    const master = await startSimQuake3Master({ fleet, perDatagram: 40 });
    try {
      const record: SourceRecord = {
        id: 1,
        name: "q3",
        kind: "ADDRESS_LIST",
        host: "",
        port: null,
        filter: "",
        regions: [],
        intervalMs: 60_000,
        enabled: true,
        options: { quake3Master: `127.0.0.1:${master.address.port}` },
      };
      const listing = await createAddressListSource(record, { guard: loopbackGuard() }).list(
        { region: -1, split: "" },
        AbortSignal.timeout(3000),
      );
      expect(listing.partial).toBe(false);
      expect(listing.servers).toEqual(
        quake3.map((s) => ({ host: s.host, queryPort: s.port, protocol: "quake3" })),
      );
    } finally {
      await master.close();
    }
  });
});
