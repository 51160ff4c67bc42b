-- The API's LAST_SEEN and PING sort keys in a table of their own, so that the crawl's answer update of
-- game_server can be heap-only (HOT) (issue 14 item 2, "the index's own cost"). An update is HOT only when
-- no indexed column changes and the row's page has room for the new version; then PostgreSQL writes no
-- index entry at all. last_answered_at changes with every answer and ping_ms with most, and both were
-- indexed on game_server for those two sorts, so every answer wrote a new entry into each of the table's
-- 17 indexes. Here the two keys, COALESCEd as the sorts need them (migration 20261122010000_api_keyset_indexes),
-- live in a narrow row with the two keyset indexes, and game_server keeps half of each page free
-- (fillfactor 50) for the new versions. An answer that changes no other indexed column (players, name,
-- map, status: most of them, empty servers above all) then writes 3 small index entries instead of 17.
-- Measured in docs/BENCHMARKS.md ("The sort keys on a table of their own").
--
-- Statement triggers with transition tables keep the table right for every writer of game_server (the
-- crawl, the API's requery, registrations, seeds, tests) with one set-based statement per statement,
-- where a row trigger would run a function and a statement of its own per row. A server has its row from
-- its insert on.

CREATE TABLE "game_server_sort" (
    "game_server_id" BIGINT NOT NULL,
    "last_seen_key" TIMESTAMPTZ(3) NOT NULL,
    "ping_key" INTEGER NOT NULL,

    CONSTRAINT "game_server_sort_pkey" PRIMARY KEY ("game_server_id")
);

ALTER TABLE "game_server_sort" ADD CONSTRAINT "game_server_sort_game_server_id_fkey"
    FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "game_server_sort" ("game_server_id", "last_seen_key", "ping_key")
SELECT "id", COALESCE("last_answered_at", TIMESTAMPTZ '1970-01-01 00:00:00+00'), COALESCE("ping_ms", 32767)
FROM "game_server";

CREATE INDEX "game_server_sort_last_seen_key_id_idx" ON "game_server_sort"("last_seen_key", "game_server_id");
CREATE INDEX "game_server_sort_ping_key_id_idx" ON "game_server_sort"("ping_key", "game_server_id");

DROP INDEX IF EXISTS "game_server_last_seen_key_id_idx";
DROP INDEX IF EXISTS "game_server_ping_key_id_idx";

-- Half of each page free: a crawl's batch updates rows that sit side by side (listed, so inserted, in the
-- same order), all in one statement, and a page can take a new version of each of its rows only when it has
-- room for all of them (at 80, 34-69 % of the updates were HOT over the first three crawls, at 50 all of
-- them). The price is the heap's size: about twice that of a full table (379 against 178 MB for 100,000
-- rows of 1.7 kB). Applies to the pages written from now on; the full ones get their room as rows move.
ALTER TABLE "game_server" SET (fillfactor = 50);

CREATE FUNCTION "game_server_sort_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "game_server_sort" ("game_server_id", "last_seen_key", "ping_key")
  SELECT n."id", COALESCE(n."last_answered_at", TIMESTAMPTZ '1970-01-01 00:00:00+00'), COALESCE(n."ping_ms", 32767)
  FROM "new_rows" n;
  RETURN NULL;
END $$;

-- Only the rows whose keys changed are written: a statement that touches neither column writes nothing here.
CREATE FUNCTION "game_server_sort_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "game_server_sort" s SET "last_seen_key" = k."last_seen_key", "ping_key" = k."ping_key"
  FROM (
    SELECT n."id",
      COALESCE(n."last_answered_at", TIMESTAMPTZ '1970-01-01 00:00:00+00') AS "last_seen_key",
      COALESCE(n."ping_ms", 32767) AS "ping_key"
    FROM "new_rows" n
  ) k
  WHERE s."game_server_id" = k."id" AND (s."last_seen_key", s."ping_key") IS DISTINCT FROM (k."last_seen_key", k."ping_key");
  RETURN NULL;
END $$;

CREATE TRIGGER "game_server_sort_insert" AFTER INSERT ON "game_server"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "game_server_sort_insert"();
CREATE TRIGGER "game_server_sort_update" AFTER UPDATE ON "game_server"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "game_server_sort_update"();
