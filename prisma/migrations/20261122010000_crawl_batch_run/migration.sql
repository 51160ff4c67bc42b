-- A batch knows its listing run, so answered/failed counts land on the run (per region) too.
-- AlterTable
ALTER TABLE "crawl_batch" ADD COLUMN "run_id" INTEGER;

-- AddForeignKey
ALTER TABLE "crawl_batch" ADD CONSTRAINT "crawl_batch_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "crawl_run"("id") ON DELETE SET NULL ON UPDATE CASCADE;
