-- Issue 14, item 6: the built-in "index" list source, whose listing is the index itself (every known,
-- queryable, not delisted game_server). Its crawls query every known server at QUERY_INTERVAL_MS while the
-- other sources only list (docs/crawler.md, "Cadence").
ALTER TYPE "MasterSourceKind" ADD VALUE IF NOT EXISTS 'INDEX';
