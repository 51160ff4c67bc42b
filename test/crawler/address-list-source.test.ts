import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  parseAddressListEntry,
  parseAddressListText,
} from "../../src/crawler/sources/address-list-entries";
import { createAddressListSource } from "../../src/crawler/sources/address-list-source";
import type { SourceRecord } from "../../src/crawler/list-source";
import { loopbackGuard } from "../helpers/loopback-guard";

const record = (options: unknown): SourceRecord => ({
  id: 1,
  name: "list",
  kind: "ADDRESS_LIST",
  host: "",
  port: null,
  filter: "",
  regions: [],
  intervalMs: 60_000,
  enabled: true,
  options,
});
const split = { region: -1, split: "" };

describe("address list entries", () => {
  it("reads an optional protocol (word or scheme), the query port and an optional game port", () => {
    expect(parseAddressListEntry("127.0.0.1:27015", "source")).toEqual({
      host: "127.0.0.1",
      queryPort: 27015,
      protocol: "source",
    });
    expect(parseAddressListEntry("quake3 127.0.0.2:27960", "source")).toEqual({
      host: "127.0.0.2",
      queryPort: 27960,
      protocol: "quake3",
    });
    expect(parseAddressListEntry("ase://[::1]:22126 game=22003", "source")).toEqual({
      host: "::1",
      queryPort: 22126,
      protocol: "ase",
      gamePort: 22003,
    });
    expect(parseAddressListEntry("127.0.0.1:7778", "gamespy1")).toMatchObject({
      protocol: "gamespy1",
    });
    for (const bad of [
      "nope 127.0.0.1:1",
      "unknown://127.0.0.1:1",
      "127.0.0.1",
      "127.0.0.1:70000",
      "quake3 127.0.0.1:1 port=3",
    ]) {
      expect(parseAddressListEntry(bad, "source")).toBeNull();
    }
  });

  it("skips comments and blank lines and reports unreadable lines", () => {
    const { servers, bad } = parseAddressListText(
      "# servers\nquake3 127.0.0.1:27960  # q3\n\ndoom3 127.0.0.1:27666\r\ngarbage\n",
      "source",
    );
    expect(servers.map((s) => s.protocol)).toEqual(["quake3", "doom3"]);
    expect(bad).toEqual(["garbage"]);
  });
});

describe("address list source", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "gsindex-list-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("lists options.addresses as before", async () => {
    const result = await createAddressListSource(
      record({ addresses: ["127.0.0.1:27015", "[::1]:27016"], protocol: "halflife" }),
      { guard: loopbackGuard() },
    ).list(split, AbortSignal.timeout(1000));
    expect(result).toEqual({
      servers: [
        { host: "127.0.0.1", queryPort: 27015, protocol: "halflife" },
        { host: "::1", queryPort: 27016, protocol: "halflife" },
      ],
      partial: false,
    });
  });

  it('mixes protocols in options.addresses: "PROTOCOL HOST:PORT" strings and { address, protocol, gamePort } objects', async () => {
    const addresses = [
      "quake3 127.0.0.1:27960",
      { address: "127.0.0.2:22126", protocol: "ase", gamePort: 22003 },
      { address: "[::1]:27015" },
      { address: "127.0.0.3:1", protocol: "nope" },
      { protocol: "quake3" },
      42,
    ];
    const result = await createAddressListSource(record({ addresses, protocol: "halflife" }), {
      guard: loopbackGuard(),
    }).list(split, AbortSignal.timeout(1000));
    expect(result.servers).toEqual([
      { host: "127.0.0.1", queryPort: 27960, protocol: "quake3" },
      { host: "127.0.0.2", queryPort: 22126, gamePort: 22003, protocol: "ase" },
      { host: "::1", queryPort: 27015, protocol: "halflife" },
    ]);
    expect(result.partial).toBe(false);
    expect(result.error).toBe(
      'unparsable addresses: {"address":"127.0.0.3:1","protocol":"nope"}, {"protocol":"quake3"}, 42',
    );
  });

  it("reads a file the operator provides", async () => {
    const file = path.join(dir, "servers.txt");
    await writeFile(file, "quake3 127.0.0.1:27960\ngamespy3 127.0.0.1:29900\n");
    const result = await createAddressListSource(record({ file }), { guard: loopbackGuard() }).list(
      split,
      AbortSignal.timeout(1000),
    );
    expect(result.servers.map((s) => [s.protocol, s.queryPort])).toEqual([
      ["quake3", 27960],
      ["gamespy3", 29900],
    ]);
    expect(result.partial).toBe(false);
  });

  it("reads a URL (loopback HTTP) and is partial when the list cannot be read", async () => {
    const server = http.createServer((req, res) => {
      if (req.url === "/list.txt") res.end("ase 127.0.0.1:22126 game=22003\n");
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const ok = await createAddressListSource(
        record({ url: `http://127.0.0.1:${port}/list.txt` }),
        { guard: loopbackGuard() },
      ).list(split, AbortSignal.timeout(2000));
      expect(ok.servers).toEqual([
        { host: "127.0.0.1", queryPort: 22126, gamePort: 22003, protocol: "ase" },
      ]);
      const missing = await createAddressListSource(
        record({ url: `http://127.0.0.1:${port}/missing` }),
        { guard: loopbackGuard() },
      ).list(split, AbortSignal.timeout(2000));
      expect(missing).toMatchObject({
        servers: [],
        partial: true,
        error: expect.stringContaining("HTTP 404"),
      });
      const noFile = await createAddressListSource(record({ file: path.join(dir, "absent.txt") }), {
        guard: loopbackGuard(),
      }).list(split, AbortSignal.timeout(2000));
      expect(noFile).toMatchObject({ servers: [], partial: true });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
