-- A fingerprint of the rules and raw values each row holds, as the crawl's answer write stored them
-- (src/crawler/store/rules-digest.ts): an answer with the same rules leaves them out of the write, so they
-- are neither serialised by the crawler nor parsed and compared by PostgreSQL on every crawl (issue 14
-- item 2). NULL, as every existing row starts, matches no digest: the next answer writes its rules as before.
ALTER TABLE "game_server" ADD COLUMN "rules_digest" BIGINT;
