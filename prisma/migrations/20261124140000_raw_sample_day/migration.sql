-- Raw history in one row per server per UTC day (docs/storage.md, "Raw samples"). A row per sample cost
-- about 38.7 KB per server per day at 5-minute crawls (288 tuples with their headers and primary-key
-- entries); the same samples as arrays in one row, compressed by TOAST, cost about 3 KB.
--
-- Crawls still write one row per sample into `server_sample`, keyed (game_server_id, crawl_at, crawl_id)
-- so that a retried or duplicated write is a no-op, but into one partition per hour from now on
-- (server_sample_pYYYYMMDDHH; rows of an hour without a partition go to the DEFAULT partition). The
-- hourly retention job appends each finished hour to the day rows of `server_sample_day` and drops the
-- hour's partition (src/crawler/store/history-store.ts, compactSamples): no DELETE, no vacuum debt. The
-- existing day partitions (server_sample_pYYYYMMDD) are compacted the same way by the first retention
-- run after this migration, within the hour, while crawls and reads go on.
--
-- `server_sample_range(from, to)` reads both as one sample per row, as `server_sample` was read before.

-- at_ms: milliseconds from the day's 00:00 UTC (crawl_at keeps millisecond precision); the arrays are
-- parallel, one element per sample, in the order the hours were compacted (time order, except for a
-- sample written after its hour was compacted). until_at: the latest crawl_at in the row, which lets a
-- sample write skip the arrays of rows that cannot hold its crawl.
CREATE TABLE "server_sample_day" (
    "game_server_id" BIGINT NOT NULL,
    "day" DATE NOT NULL,
    "until_at" TIMESTAMPTZ(3) NOT NULL,
    "at_ms" INTEGER[] NOT NULL,
    "crawl_id" BIGINT[] NOT NULL,
    "online" BOOLEAN[] NOT NULL,
    "players" SMALLINT[] NOT NULL,
    "bots" SMALLINT[] NOT NULL,
    "max_players" SMALLINT[] NOT NULL,
    "map" TEXT[] NOT NULL,
    "ping_ms" SMALLINT[] NOT NULL,

    CONSTRAINT "server_sample_day_pkey" PRIMARY KEY ("game_server_id", "day")
) PARTITION BY RANGE ("day");

ALTER TABLE "server_sample_day" ADD CONSTRAINT "server_sample_day_game_server_id_fkey" FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Inlined into the calling statement (one SQL SELECT, STABLE), so that an outer filter on game_server_id
-- reaches both branches and the time range prunes the partitions of both.
CREATE FUNCTION "server_sample_range"(from_at TIMESTAMPTZ, to_at TIMESTAMPTZ) RETURNS TABLE (game_server_id BIGINT, crawl_at TIMESTAMPTZ, crawl_id BIGINT, online BOOLEAN, players SMALLINT,
    bots SMALLINT, max_players SMALLINT, map TEXT, ping_ms SMALLINT)
LANGUAGE sql STABLE AS $$
    SELECT "game_server_id", "crawl_at"::timestamptz, "crawl_id", "online", "players", "bots", "max_players", "map", "ping_ms"
    FROM "server_sample" WHERE "crawl_at" >= from_at AND "crawl_at" < to_at
    UNION ALL
    SELECT x.* FROM (
        SELECT d."game_server_id", d."day"::timestamp AT TIME ZONE 'UTC' + u.at_ms * interval '1 millisecond' AS crawl_at, u.crawl_id,
            u.online, u.players, u.bots, u.max_players, u.map, u.ping_ms
        FROM "server_sample_day" d
        CROSS JOIN LATERAL unnest(d."at_ms", d."crawl_id", d."online", d."players", d."bots", d."max_players", d."map", d."ping_ms")
            AS u(at_ms, crawl_id, online, players, bots, max_players, map, ping_ms)
        WHERE d."day" >= (from_at AT TIME ZONE 'UTC')::date AND d."day" <= (to_at AT TIME ZONE 'UTC')::date
            AND d."until_at" >= from_at
    ) x WHERE x.crawl_at >= from_at AND x.crawl_at < to_at
$$;

CREATE TABLE "server_sample_default" PARTITION OF "server_sample" DEFAULT;
