/**
 * The index as a list source (kind INDEX, the built-in source `index`): its listing is every known, queryable,
 * not delisted game_server, so its crawls re-query the whole index at their own interval (QUERY_INTERVAL_MS)
 * while the other sources only list (docs/crawler.md, "Cadence"). The listing is planned in SQL, straight
 * from game_server into the crawl's batches (store/crawl-store.ts planIndexListing), never through the
 * listing upsert: the index must not mark its servers as listed, or no server would ever miss a listing.
 */
import type { ListSource, ListingResult } from "../list-source";

/** The built-in index source's name (master_source.name), upserted by the scheduler role. */
export const INDEX_SOURCE_NAME = "index";

export function createIndexSource(): ListSource {
  return {
    splits: () => [{ region: -1, split: "" }],
    list(): Promise<ListingResult> {
      return Promise.reject(
        new Error("the index source is listed in SQL (planIndexListing), not through list()"),
      );
    },
  };
}
