-- The API's `playerName` filter reads a superset of each server's player names, written as players arrive,
-- and checks the server's current names itself (issue 14 item 2, "the index's own cost").
--
-- Before, game_server_search held each server's whole list of names, rewritten whenever the list changed: a
-- new row version, and with it every trigram of every name (about 200) and of the server's name (about 35)
-- entered again into the two trigram GIN indexes, for one player who joined or left. In the index crawl of
-- 100,000 simulated servers that upkeep was 40-60 % of PostgreSQL's CPU (docs/BENCHMARKS-history.md,
-- 2026-12-07, "player names written as they arrive").
--
-- Here a changed list writes only the names that arrived since the last answer, as one row of
-- game_server_player_search (a few names: their trigrams only). A name that left stays in its row until the
-- server's rows are compacted, so the table holds every current name and some past ones; the API's filter
-- matches it through the trigram index and keeps the servers whose current names (game_server.player_names)
-- match, so its answers are exact and current. A crawl's close compacts the servers with many rows into one
-- row of their current names (src/crawler/store/player-name-search.ts). A row trigger keeps the table for
-- every writer of game_server (the crawl, the API's requery, seeds, tests).
--
-- game_server_search keeps the server's name and its trigram index, now written only when the name changes.

CREATE TABLE "game_server_player_search" (
    "game_server_id" BIGINT NOT NULL,
    "names" TEXT NOT NULL
);

ALTER TABLE "game_server_player_search" ADD CONSTRAINT "game_server_player_search_game_server_id_fkey"
    FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "game_server_player_search" ("game_server_id", "names")
SELECT "id", "player_names" FROM "game_server" WHERE "player_names" <> '';

CREATE INDEX "game_server_player_search_game_server_id_idx" ON "game_server_player_search" ("game_server_id");
CREATE INDEX "game_server_player_search_names_trgm_idx" ON "game_server_player_search" USING GIN ("names" gin_trgm_ops);

DROP TRIGGER "game_server_search_insert" ON "game_server";
DROP TRIGGER "game_server_search_update" ON "game_server";
DROP FUNCTION "game_server_search_sync"();
DROP INDEX "game_server_search_player_names_trgm_idx";
ALTER TABLE "game_server_search" DROP COLUMN "player_names";
DELETE FROM "game_server_search" WHERE "name" IS NULL;
ALTER TABLE "game_server_search" ALTER COLUMN "name" SET NOT NULL;

CREATE FUNCTION "game_server_search_name_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."name" IS NULL THEN
    DELETE FROM "game_server_search" WHERE "game_server_id" = NEW."id";
  ELSE
    INSERT INTO "game_server_search" ("game_server_id", "name") VALUES (NEW."id", NEW."name")
    ON CONFLICT ("game_server_id") DO UPDATE SET "name" = EXCLUDED."name";
  END IF;
  RETURN NULL;
END $$;

-- The names in NEW and not in OLD (the player names are game_server.player_names: one per line), as one row.
CREATE FUNCTION "game_server_player_search_arrivals"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  arrived TEXT;
BEGIN
  -- A first answer, or players on a server that had none: every name arrived.
  IF TG_OP = 'INSERT' OR OLD."player_names" = '' THEN
    arrived := NEW."player_names";
  ELSE
    SELECT string_agg(n, E'\n') INTO arrived
    FROM unnest(string_to_array(NEW."player_names", E'\n')) AS n
    WHERE n <> ALL (string_to_array(OLD."player_names", E'\n'));
  END IF;
  IF arrived <> '' THEN
    INSERT INTO "game_server_player_search" ("game_server_id", "names") VALUES (NEW."id", arrived);
  END IF;
  RETURN NULL;
END $$;

-- WHEN keeps the functions from being called at all for the rows whose text did not change.
CREATE TRIGGER "game_server_search_name_insert" AFTER INSERT ON "game_server" FOR EACH ROW
    WHEN (NEW."name" IS NOT NULL)
    EXECUTE FUNCTION "game_server_search_name_sync"();
CREATE TRIGGER "game_server_search_name_update" AFTER UPDATE OF "name" ON "game_server" FOR EACH ROW
    WHEN (OLD."name" IS DISTINCT FROM NEW."name")
    EXECUTE FUNCTION "game_server_search_name_sync"();
CREATE TRIGGER "game_server_player_search_insert" AFTER INSERT ON "game_server" FOR EACH ROW
    WHEN (NEW."player_names" <> '')
    EXECUTE FUNCTION "game_server_player_search_arrivals"();
CREATE TRIGGER "game_server_player_search_update" AFTER UPDATE OF "player_names" ON "game_server" FOR EACH ROW
    WHEN (OLD."player_names" IS DISTINCT FROM NEW."player_names")
    EXECUTE FUNCTION "game_server_player_search_arrivals"();
