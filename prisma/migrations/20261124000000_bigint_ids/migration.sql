-- 64-bit ids for everything that grows with crawls (issue 11): game servers, crawls, listing runs, and every
-- column that refers to them (batches, samples, day rows). A 32-bit SERIAL runs out after 2^31 values, and
-- a sequence value is drawn per insert attempt, not per row kept. Listing no longer draws ids for servers that
-- exist (src/crawler/store/server-store.ts upsertListed), so this is the margin, not the fix.
-- master_source and blocked_range stay 32-bit: they grow only when an operator adds one.
--
-- Existing ids keep their values (int -> bigint widens), so the API's keyset cursors, which carry the
-- row's id as a JSON number (src/graphql/common/cursor.ts), decode and page as before. The sequences are
-- widened too: ALTER COLUMN TYPE leaves a SERIAL's sequence `AS integer` with an int4 maximum, which would
-- still stop at 2^31 - 1.
--
-- Every table named here is rewritten (server_sample partition by partition) under an ACCESS EXCLUSIVE
-- lock: stop the crawler and the API while it runs; it takes time proportional to the raw window.
-- Foreign keys are dropped and added back around the change so each is checked once, on the new types.

-- DropForeignKey
ALTER TABLE "server_sample" DROP CONSTRAINT "server_sample_game_server_id_fkey";
ALTER TABLE "server_day" DROP CONSTRAINT "server_day_game_server_id_fkey";
ALTER TABLE "crawl_batch" DROP CONSTRAINT "crawl_batch_crawl_id_fkey";
ALTER TABLE "crawl_batch" DROP CONSTRAINT "crawl_batch_run_id_fkey";
ALTER TABLE "crawl_run" DROP CONSTRAINT "crawl_run_crawl_id_fkey";

-- AlterTable
ALTER TABLE "game_server" ALTER COLUMN "id" SET DATA TYPE BIGINT;
ALTER SEQUENCE "game_server_id_seq" AS BIGINT;

ALTER TABLE "crawl" ALTER COLUMN "id" SET DATA TYPE BIGINT;
ALTER SEQUENCE "crawl_id_seq" AS BIGINT;

ALTER TABLE "crawl_run" ALTER COLUMN "id" SET DATA TYPE BIGINT,
  ALTER COLUMN "crawl_id" SET DATA TYPE BIGINT;
ALTER SEQUENCE "crawl_run_id_seq" AS BIGINT;

ALTER TABLE "crawl_batch" ALTER COLUMN "crawl_id" SET DATA TYPE BIGINT,
  ALTER COLUMN "run_id" SET DATA TYPE BIGINT,
  ALTER COLUMN "server_ids" SET DATA TYPE BIGINT[];

ALTER TABLE "server_sample" ALTER COLUMN "game_server_id" SET DATA TYPE BIGINT,
  ALTER COLUMN "crawl_id" SET DATA TYPE BIGINT;

ALTER TABLE "server_day" ALTER COLUMN "game_server_id" SET DATA TYPE BIGINT;

-- AddForeignKey
ALTER TABLE "crawl_run" ADD CONSTRAINT "crawl_run_crawl_id_fkey" FOREIGN KEY ("crawl_id") REFERENCES "crawl"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "crawl_batch" ADD CONSTRAINT "crawl_batch_crawl_id_fkey" FOREIGN KEY ("crawl_id") REFERENCES "crawl"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "crawl_batch" ADD CONSTRAINT "crawl_batch_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "crawl_run"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "server_sample" ADD CONSTRAINT "server_sample_game_server_id_fkey" FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "server_day" ADD CONSTRAINT "server_day_game_server_id_fkey" FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;
