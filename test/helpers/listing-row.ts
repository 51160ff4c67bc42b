import type { ListingRow } from "../../src/crawler/store/server-store";

/** One master listing row of a queryable server on 127.0.0.1, region 3, with `extra` on top. */
export const listingRow = (queryPort: number, extra: Partial<ListingRow> = {}): ListingRow => ({
  address: "127.0.0.1",
  ip: "127.0.0.1",
  queryPort,
  gamePort: null,
  region: 3,
  protocol: "source",
  notQueryable: false,
  isRelay: false,
  managed: false,
  reported: null,
  ...extra,
});
