-- A listing cut short (a Valve master's rate limit) records where it stopped, so the split's next listing
-- goes on from there instead of starting over and never getting past the first pages.
-- AlterTable
ALTER TABLE "crawl_run" ADD COLUMN "resume_cursor" TEXT;
