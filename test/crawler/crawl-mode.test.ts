/** What a source's crawls query (docs/crawler.md, "Cadence"): the index source, QUERY_FROM_INDEX and the `query` option. */
import { crawlModeOf } from "../../src/crawler/crawl-jobs";

describe("crawlModeOf", () => {
  it("lists and queries by default, as before the index source", () => {
    expect(crawlModeOf({ kind: "VALVE_UDP", options: {} }, {})).toBe("list-and-query");
    expect(crawlModeOf({ kind: "ADDRESS_LIST", options: null }, { queryFromIndex: false })).toBe(
      "list-and-query",
    );
  });

  it("only lists under QUERY_FROM_INDEX, unless the source asks to query", () => {
    expect(crawlModeOf({ kind: "VALVE_UDP", options: {} }, { queryFromIndex: true })).toBe(
      "listing-only",
    );
    expect(
      crawlModeOf({ kind: "VALVE_UDP", options: { query: true } }, { queryFromIndex: true }),
    ).toBe("list-and-query");
  });

  it("lets a source list only without QUERY_FROM_INDEX", () => {
    expect(
      crawlModeOf({ kind: "STEAM_WEB_API", options: { query: false } }, { queryFromIndex: false }),
    ).toBe("listing-only");
  });

  it("queries the whole index for the index source, whatever its options", () => {
    expect(
      crawlModeOf({ kind: "INDEX", options: { query: false } }, { queryFromIndex: false }),
    ).toBe("index");
  });
});
