-- The sort keys' update (migration 20261128000000_game_server_sort_keys) planned at every call instead of
-- once per connection.
--
-- PL/pgSQL keeps the plan of a statement without parameters for as long as the connection lives, and the
-- update's only input is the transition table. A connection that first ran it while game_server_sort was
-- small (a fresh index's discovery crawl: the first listing page, a few hundred rows) kept a hash join that
-- reads the whole table, and every later update of game_server through that connection hashed all of
-- game_server_sort again: 40 ms per statement at 100,000 servers, whether the statement changed 250 rows
-- or 5. Only new statistics on the table replace such a plan, and without autovacuum none come. In a
-- 100,000-server discovery crawl on a private PostgreSQL with pg_stat_statements this update took 20.3 s
-- for 96,819 rows (210 us a row) against 2.8 s (28 us) in the index crawl that followed (docs/BENCHMARKS-history.md,
-- 2026-11-30). EXECUTE plans it with the sizes of the moment: a look-up by primary key per changed row once
-- the table is large, a hash join while it is small. Planning costs tens of microseconds a statement.

CREATE OR REPLACE FUNCTION "game_server_sort_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE $sql$
    UPDATE "game_server_sort" s SET "last_seen_key" = k."last_seen_key", "ping_key" = k."ping_key"
    FROM (
      SELECT n."id",
        COALESCE(n."last_answered_at", TIMESTAMPTZ '1970-01-01 00:00:00+00') AS "last_seen_key",
        COALESCE(n."ping_ms", 32767) AS "ping_key"
      FROM "new_rows" n
    ) k
    WHERE s."game_server_id" = k."id" AND (s."last_seen_key", s."ping_key") IS DISTINCT FROM (k."last_seen_key", k."ping_key")
  $sql$;
  RETURN NULL;
END $$;
