-- Where each server's player count comes from, and what each crawl covered (issue 15, items 4 and 5), so a
-- stats site can say which numbers it publishes and "data as of T, coverage X %".

-- CreateEnum
CREATE TYPE "PlayerCountSource" AS ENUM ('A2S_INFO', 'A2S_PLAYER', 'MANAGEMENT', 'LEGACY_STATUS', 'STEAM_WEB_API');

-- CreateEnum
CREATE TYPE "ListingTruncation" AS ENUM ('CAPPED', 'CUT_SHORT', 'RESUMED');

-- AlterTable
ALTER TABLE "game_server" ADD COLUMN "players_source" "PlayerCountSource";

-- AlterTable
ALTER TABLE "crawl" ADD COLUMN "timed_out" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "refused" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "listed_at" TIMESTAMPTZ(3),
ADD COLUMN "query_started_at" TIMESTAMPTZ(3),
ADD COLUMN "queried_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "crawl_run" ADD COLUMN "truncation" "ListingTruncation",
ADD COLUMN "capped_parts" INTEGER NOT NULL DEFAULT 0;

-- Rows written before: the count's source follows from how the row was filled; an older listing that
-- stopped short cannot tell a cap from a cut, and is recorded as cut short.
UPDATE "game_server" SET "players_source" = CASE
    WHEN "management_registered" THEN 'MANAGEMENT'::"PlayerCountSource"
    WHEN "last_answered_at" IS NOT NULL AND "protocol" = 'source' THEN 'A2S_INFO'::"PlayerCountSource"
    WHEN "last_answered_at" IS NOT NULL THEN 'LEGACY_STATUS'::"PlayerCountSource"
    WHEN "name" IS NOT NULL THEN 'STEAM_WEB_API'::"PlayerCountSource"
  END;
UPDATE "crawl_run" SET "truncation" = 'CUT_SHORT' WHERE "partial";
UPDATE "crawl" c SET "listed_at" = (SELECT max(r."finished_at") FROM "crawl_run" r WHERE r."crawl_id" = c."id")
  WHERE c."finished_at" IS NOT NULL;
