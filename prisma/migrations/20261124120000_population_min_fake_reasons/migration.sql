-- Issue 15, items 2 and 3.
--
-- population_rollup.players_min: the fewest players at one moment of the bucket, beside the average and the
-- peak, so every bucket can show min <= avg <= peak (docs/storage.md, "Population rollups"). Buckets rolled
-- up before this have no minimum: 0 is a true lower bound. Their peak was the largest total of one source's
-- crawl, which could fall below the average across sources; the average is a lower bound of the true peak,
-- so such a peak is raised to it. Buckets whose raw samples are still kept are recomputed by the next
-- rollup of their hour.
ALTER TABLE "population_rollup" ADD COLUMN "players_min" INTEGER NOT NULL DEFAULT 0;
UPDATE "population_rollup" SET "players_peak" = CEIL("players_avg")::int WHERE "players_peak" < "players_avg";

-- population_rollup.with_suspected_fakes: the API's population(excludeSuspectedFakes: false). Such a row is
-- stored only where suspected fakes changed the bucket; elsewhere the row without them stands for both.
ALTER TABLE "population_rollup" ADD COLUMN "with_suspected_fakes" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "population_rollup" DROP CONSTRAINT "population_rollup_pkey";
ALTER TABLE "population_rollup" ADD CONSTRAINT "population_rollup_pkey" PRIMARY KEY ("resolution", "dimension", "key", "with_suspected_fakes", "bucket_at");

-- game_server.fake_reasons: which rules of docs/fake-players.md marked the server a suspected fake.
-- suspected_fake stays the one flag every reader filters on; until now only the port-farm rule set it.
CREATE TYPE "FakeReason" AS ENUM ('PORT_FARM', 'PLAYERS_ABOVE_MAX', 'INFO_ABOVE_PLAYER_LIST', 'SAME_NAME_PLAYERS', 'ZERO_DURATION_PLAYERS', 'SHARED_PLAYER_NAMES');
ALTER TABLE "game_server" ADD COLUMN "fake_reasons" "FakeReason"[] NOT NULL DEFAULT '{}';
UPDATE "game_server" SET "fake_reasons" = '{PORT_FARM}' WHERE "suspected_fake";
