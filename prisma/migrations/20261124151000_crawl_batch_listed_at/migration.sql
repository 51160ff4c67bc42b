-- The listing that planned a batch left its unchanged servers' last_listed_at to the batch's write: this is
-- the time it listed them (its transaction's now(), as last_listed_at would have been). NULL: the listing
-- wrote every row itself (an index listing, a listing-only crawl, batches planned before this migration).
ALTER TABLE "crawl_batch" ADD COLUMN "listed_at" TIMESTAMPTZ(3);
