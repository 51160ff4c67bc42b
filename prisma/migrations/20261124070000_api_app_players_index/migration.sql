-- The servers list of one game by players (the web browser's default view, `servers(filter: { appId },
-- orderBy: PLAYERS)`): with only (players, id) the keyset scan walked the busiest servers of every game
-- and threw away the other games' rows (7,700 rows read for page 1 of appId 730 in a 100,000-server
-- index, docs/BENCHMARKS.md). With the game first, the page is one range scan of that game's rows,
-- and the row comparison of the cursor is still an index condition. It replaces the index on app_id
-- alone, whose lookups it serves, so the crawler's updates keep the same number of index writes.

DROP INDEX IF EXISTS "game_server_app_id_idx";
CREATE INDEX "game_server_app_id_players_id_idx" ON "game_server"("app_id", "players", "id");
