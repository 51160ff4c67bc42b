-- The answer's large values on game_server (rules, player_list, raw, player_names) compressed with LZ4
-- instead of PostgreSQL's default, pglz.
--
-- A row over about 2 kB is compressed attribute by attribute as it is written. An answer with rules is that
-- size (2.7 kB of rules and 1.2 kB of players on average in the bench's simulated fleet), so the crawl's
-- update of game_server compressed every new answer, and every later answer whose player list changed.
-- pglz was the largest cost of the first answer's write left: on a private PostgreSQL, the crawl's own
-- writeBatchOutcomes over 30,000 new servers took 260-278 us of backend CPU per server with pglz and 215-225 us
-- with LZ4 (docs/BENCHMARKS-history.md, 2026-12-06). LZ4 compresses these values a little less (rules 864 ->
-- 1,056 bytes on average): game_server grows by about 9 %; its history tables keep pglz.
--
-- Only new values are compressed this way: rows written before keep their pglz values, which stay readable,
-- until the crawl writes them again. A PostgreSQL built without LZ4 (configure --with-lz4) keeps pglz: the
-- setting lists the methods the server has.

DO $$
BEGIN
  IF (SELECT 'lz4' = ANY ("enumvals") FROM "pg_settings" WHERE "name" = 'default_toast_compression') THEN
    ALTER TABLE "game_server"
      ALTER COLUMN "rules" SET COMPRESSION lz4,
      ALTER COLUMN "player_list" SET COMPRESSION lz4,
      ALTER COLUMN "raw" SET COMPRESSION lz4,
      ALTER COLUMN "player_names" SET COMPRESSION lz4;
  END IF;
END $$;
