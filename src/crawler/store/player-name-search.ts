/**
 * Compaction of game_server_player_search, the table behind the API's `playerName` filter (migration
 * 20261207000000_player_name_arrivals). Each answer that brings new names adds a row of them, and names
 * that leave stay: the table is a superset of every server's current names, which the filter checks against
 * game_server.player_names. A server whose rows pile up gets them replaced by one row of its current names,
 * so the table stays near one list per server and searches do not wade through names long gone.
 */
import { pgPoolOf, type Db } from "../../shared/db";

/**
 * Rows a server may have before a close compacts them: about an hour of answers that each brought someone
 * new at a 5-minute interval. Compacting writes all of a server's names again (their trigrams into the
 * index), which an arrival's row spares; at this bound that is a twelfth of a rewrite per busy server per
 * crawl.
 */
export const PLAYER_SEARCH_ROWS_PER_SERVER = 12;

/**
 * Replaces the rows of every server with more than `maxRows` by one row of its current names (none when it
 * has none). One statement: a crawl writing meanwhile adds its arrivals' rows, which this statement's
 * snapshot does not see and so does not delete, and every current name stays in the table. Returns the
 * rows it wrote: one per compacted server that has names.
 */
export async function compactPlayerSearch(
  db: Db,
  maxRows: number = PLAYER_SEARCH_ROWS_PER_SERVER,
): Promise<number> {
  // One statement, atomic by itself: no transaction around it.
  const result = await pgPoolOf(db).query(
    `WITH crowded AS (
      SELECT game_server_id FROM game_server_player_search GROUP BY game_server_id HAVING count(*) > $1::int
    ), gone AS (
      DELETE FROM game_server_player_search p USING crowded c WHERE p.game_server_id = c.game_server_id
      RETURNING p.game_server_id
    ), compacted AS (
      SELECT DISTINCT game_server_id FROM gone
    )
    INSERT INTO game_server_player_search (game_server_id, names)
    SELECT g.id, g.player_names FROM game_server g JOIN compacted c ON c.game_server_id = g.id
    WHERE g.player_names <> ''`,
    [maxRows],
  );
  return result.rowCount ?? 0;
}
