-- The answer's large values on game_server (rules, player_list, raw, player_names) compressed with LZ4
-- instead of PostgreSQL's default, pglz.
--
-- A row over about 2 kB is compressed attribute by attribute as it is written. An answer with rules is that
-- size (2.7 kB of rules and 1.2 kB of players on average in the bench's simulated fleet), so the crawl's
-- update of game_server compressed every new answer, and every later answer whose player list changed.
-- pglz was the largest cost of the answer's write left. On a private PostgreSQL, `node
-- dist-bench/bench/crawl/answer-compression.js --servers 100000 --rounds 3` (the crawl's own writeBatchOutcomes)
-- took 258-281 us of backend CPU per server for the first answers with pglz and 211-223 us with LZ4, and
-- 86-90 against 71-75 us for the next crawl's answers, whose player lists changed (docs/BENCHMARKS-history.md,
-- 2026-12-06). LZ4 compresses these values a little less (rules 864 -> 1,056 bytes on average): game_server
-- grows by about 11 %; the history tables keep pglz.
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
