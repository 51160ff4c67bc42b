-- Long-term history in one row per server per UTC month (docs/storage.md, "Server days"). A server_day
-- row (day totals + 24 hourly slots in seven arrays, 926 bytes, of which the 24 map names ~430) stays
-- under TOAST's ~2 KB threshold, so nothing in it is ever compressed: about 1,046 bytes per server per
-- day on disk with its primary-key entry. The same days appended into one row per month grow past the
-- threshold and TOAST compresses them (repeated map names and sample counts compress away).
--
-- Crawls still write the day being crawled into `server_day` as before (the hourly slot upserts of
-- the roll-up). Once a day has left the raw window (its raw samples are dropped, so no roll-up can
-- rewrite it), the hourly retention job moves its rows into `server_day_month`
-- (src/crawler/store/day-compaction.ts). The existing days older than the raw window are moved by the
-- first retention run after this migration, while crawls and reads go on.
--
-- `server_day_range(from_day, to_day)` reads both as one row per server per day, as `server_day` was
-- read before.

-- day_no: the day of the month (1-31) of each day in the row, in the order the days were moved; the
-- day arrays (samples ... top_map) are parallel to it, one element per day; the hourly arrays hold 24
-- slots per day in the same order (day k: elements (k-1)*24+1 .. k*24).
CREATE TABLE "server_day_month" (
    "game_server_id" BIGINT NOT NULL,
    "month" DATE NOT NULL,
    "day_no" SMALLINT[] NOT NULL,
    "samples" INTEGER[] NOT NULL,
    "online" INTEGER[] NOT NULL,
    "players_min" SMALLINT[] NOT NULL,
    "players_max" SMALLINT[] NOT NULL,
    "players_sum" INTEGER[] NOT NULL,
    "bots_max" SMALLINT[] NOT NULL,
    "top_map" TEXT[] NOT NULL,
    "h_samples" SMALLINT[] NOT NULL,
    "h_online" SMALLINT[] NOT NULL,
    "h_players_min" SMALLINT[] NOT NULL,
    "h_players_max" SMALLINT[] NOT NULL,
    "h_players_sum" INTEGER[] NOT NULL,
    "h_bots_max" SMALLINT[] NOT NULL,
    "h_map" TEXT[] NOT NULL,

    CONSTRAINT "server_day_month_pkey" PRIMARY KEY ("game_server_id", "month")
);

ALTER TABLE "server_day_month" ADD CONSTRAINT "server_day_month_game_server_id_fkey" FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Inlined into the calling statement (one SQL SELECT, STABLE), so that an outer filter on game_server_id
-- reaches both branches. The hourly arrays are decompressed once per month row (the OFFSET 0 sub-select,
-- which the days' unnest reads from, so it runs first): sliced straight from the stored row, each day's
-- slice would decompress the whole array again.
CREATE FUNCTION "server_day_range"(from_day DATE, to_day DATE) RETURNS TABLE (game_server_id BIGINT, day DATE, samples INTEGER,
    online INTEGER, players_min SMALLINT, players_max SMALLINT, players_sum INTEGER, bots_max SMALLINT, top_map TEXT,
    h_samples SMALLINT[], h_online SMALLINT[], h_players_min SMALLINT[], h_players_max SMALLINT[], h_players_sum INTEGER[],
    h_bots_max SMALLINT[], h_map TEXT[])
LANGUAGE sql STABLE AS $$
    SELECT "game_server_id", "day", "samples", "online", "players_min", "players_max", "players_sum", "bots_max", "top_map",
        "h_samples", "h_online", "h_players_min", "h_players_max", "h_players_sum", "h_bots_max", "h_map"
    FROM "server_day" WHERE "day" >= from_day AND "day" <= to_day
    UNION ALL
    SELECT m."game_server_id", (m."month" + u.day_no - 1)::date, u.samples, u.online, u.players_min, u.players_max, u.players_sum,
        u.bots_max, u.top_map,
        h.s[u.k * 24 - 23 : u.k * 24], h.o[u.k * 24 - 23 : u.k * 24], h.pmin[u.k * 24 - 23 : u.k * 24],
        h.pmax[u.k * 24 - 23 : u.k * 24], h.psum[u.k * 24 - 23 : u.k * 24], h.b[u.k * 24 - 23 : u.k * 24],
        h.maps[u.k * 24 - 23 : u.k * 24]
    FROM "server_day_month" m
    CROSS JOIN LATERAL (
        SELECT m."day_no", m."samples", m."online", m."players_min", m."players_max", m."players_sum", m."bots_max", m."top_map",
            m."h_samples" || '{}'::smallint[] AS s, m."h_online" || '{}'::smallint[] AS o,
            m."h_players_min" || '{}'::smallint[] AS pmin, m."h_players_max" || '{}'::smallint[] AS pmax,
            m."h_players_sum" || '{}'::integer[] AS psum, m."h_bots_max" || '{}'::smallint[] AS b, m."h_map" || '{}'::text[] AS maps
        OFFSET 0
    ) h
    CROSS JOIN LATERAL unnest(h."day_no", h."samples", h."online", h."players_min", h."players_max", h."players_sum",
        h."bots_max", h."top_map") WITH ORDINALITY AS u(day_no, samples, online, players_min, players_max, players_sum, bots_max, top_map, k)
    WHERE m."month" >= date_trunc('month', from_day)::date AND m."month" <= to_day
        AND m."month" + u.day_no - 1 >= from_day AND m."month" + u.day_no - 1 <= to_day
$$;
