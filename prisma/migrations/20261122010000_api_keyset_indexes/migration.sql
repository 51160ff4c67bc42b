-- Keyset pagination of the API's `servers` list (src/graphql/game-server/server-order.ts).
-- Each ordering pages with a row comparison `(key, id) > (cursor key, cursor id)`, which an index on
-- exactly (key, id) serves in both directions (read backwards for DESC), so page 500 costs what page 1
-- costs. That needs the tiebreak id in the same direction as the key, and a key that is never NULL
-- (a NULL breaks the row comparison): nullable columns are sorted through COALESCE with a sentinel that
-- puts unknown values last in the usual direction. Text keys are lower-cased and compared in the "C"
-- collation so the order is the same on every machine and `LIKE 'prefix%'` can use the same index.
-- Prisma's schema language cannot express expression indexes; these live only here.

DROP INDEX IF EXISTS "game_server_players_id_idx";
DROP INDEX IF EXISTS "game_server_name_id_idx";
DROP INDEX IF EXISTS "game_server_map_id_idx";
DROP INDEX IF EXISTS "game_server_last_answered_at_id_idx";
DROP INDEX IF EXISTS "game_server_ping_ms_id_idx";

CREATE INDEX "game_server_players_id_idx" ON "game_server"("players", "id");
CREATE INDEX "game_server_max_players_id_idx" ON "game_server"("max_players", "id");
CREATE INDEX "game_server_name_key_id_idx" ON "game_server"((COALESCE(lower("name"), chr(1114111)) COLLATE "C"), "id");
CREATE INDEX "game_server_map_key_id_idx" ON "game_server"((COALESCE(lower("map"), chr(1114111)) COLLATE "C"), "id");
CREATE INDEX "game_server_last_seen_key_id_idx" ON "game_server"((COALESCE("last_answered_at", TIMESTAMPTZ '1970-01-01 00:00:00+00')), "id");
CREATE INDEX "game_server_ping_key_id_idx" ON "game_server"((COALESCE("ping_ms", 32767)), "id");
