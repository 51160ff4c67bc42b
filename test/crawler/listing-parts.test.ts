/**
 * How a listing handed over page by page is cut into parts (src/crawler/listing-parts.ts): each part holds
 * exactly `partRows` rows, so the store writes it as one chunk, and rows a page brings beyond a part wait
 * for the next one.
 */
import type { ListedServer } from "../../src/crawler/list-source";
import { ListingParts } from "../../src/crawler/listing-parts";
import type { ListingRow } from "../../src/crawler/store/server-store";

const serverAt = (i: number): ListedServer => ({
  host: `127.0.${Math.floor(i / 200)}.${(i % 200) + 1}`,
  queryPort: 27015 + (i % 7),
});

const rowOf = (s: ListedServer): ListingRow => ({
  address: s.host,
  ip: s.host,
  queryPort: s.queryPort,
  gamePort: null,
  region: null,
  protocol: "source",
  notQueryable: false,
  isRelay: false,
  managed: false,
  reported: null,
});

describe("ListingParts", () => {
  it("writes parts of exactly partRows rows from pages of another size, and keeps the rest in order", async () => {
    const written: ListingRow[][] = [];
    const handedOn: string[][] = [];
    const parts = new ListingParts({
      rowOf,
      write: async (rows) => {
        written.push(rows);
        return { alreadyDone: false, found: rows.length, batchKeys: [`b${written.length}`] };
      },
      handOn: async (keys) => {
        handedOn.push(keys);
      },
      partRows: 2000,
    });
    // A Valve master's pages: 231 servers each. 20 pages make 4,620 rows: two parts and 620 left.
    const servers = Array.from({ length: 20 * 231 }, (_v, i) => serverAt(i));
    for (let from = 0; from < servers.length; from += 231)
      await parts.sink(servers.slice(from, from + 231));

    expect(written.map((rows) => rows.length)).toEqual([2000, 2000]);
    expect(handedOn).toEqual([["b1"], ["b2"]]);
    expect(parts.written).toBe(4000);
    const rest = parts.takeRest();
    expect(rest).toHaveLength(620);
    // Every server once, in the order listed.
    expect([...written.flat(), ...rest].map((r) => `${r.address}:${r.queryPort}`)).toEqual(
      servers.map((s) => `${s.host}:${s.queryPort}`),
    );
  });

  it("writes a page larger than two parts as two parts at once", async () => {
    const sizes: number[] = [];
    const parts = new ListingParts({
      rowOf,
      write: async (rows) => {
        sizes.push(rows.length);
        return { alreadyDone: false, found: rows.length, batchKeys: [] };
      },
      handOn: async () => {},
      partRows: 100,
    });
    await parts.sink(Array.from({ length: 250 }, (_v, i) => serverAt(i)));
    expect(sizes).toEqual([100, 100]);
    expect(parts.takeRest()).toHaveLength(50);
  });
});
