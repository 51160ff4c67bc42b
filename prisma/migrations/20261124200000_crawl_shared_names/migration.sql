-- What the shared-names rule did at each close, and over how many servers: after a run over its budget the
-- next closes back off (src/crawler/store/shared-names.ts). Older crawls have none: the rule runs at the next close.
ALTER TABLE "crawl" ADD COLUMN "shared_names" TEXT, ADD COLUMN "shared_names_pool" INTEGER;
