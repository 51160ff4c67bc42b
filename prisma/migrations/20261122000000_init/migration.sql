-- The index: sources, game servers with current state, crawls, and history (see docs/storage.md).
-- Hand-written (Prisma's schema engine cannot run here) in the shape `prisma migrate diff` emits, plus
-- what Prisma cannot express: pg_trgm, and server_sample partitioned by day.

CREATE EXTENSION IF NOT EXISTS "pg_trgm";

-- CreateEnum
CREATE TYPE "MasterSourceKind" AS ENUM ('VALVE_UDP', 'STEAM_WEB_API', 'MANAGEMENT', 'ADDRESS_LIST');

-- CreateEnum
CREATE TYPE "GameServerStatus" AS ENUM ('UNKNOWN', 'ONLINE', 'OFFLINE', 'DELISTED');

-- CreateEnum
CREATE TYPE "PopulationDimension" AS ENUM ('ALL', 'APP', 'FOLDER', 'MAP', 'REGION', 'COUNTRY', 'PROTOCOL');

-- CreateEnum
CREATE TYPE "RollupResolution" AS ENUM ('HOUR', 'DAY');

-- CreateTable
CREATE TABLE "master_source" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "kind" "MasterSourceKind" NOT NULL,
    "host" TEXT NOT NULL,
    "port" INTEGER,
    "filter" TEXT NOT NULL DEFAULT '',
    "regions" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "interval_ms" INTEGER NOT NULL DEFAULT 300000,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "options" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "master_source_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "game_server" (
    "id" SERIAL NOT NULL,
    "address" TEXT NOT NULL,
    "ip" INET,
    "query_port" INTEGER NOT NULL,
    "game_port" INTEGER,
    "protocol" TEXT NOT NULL DEFAULT 'source',
    "region" INTEGER,
    "country" CHAR(2),
    "status" "GameServerStatus" NOT NULL DEFAULT 'UNKNOWN',
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "missed_listings" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_listed_at" TIMESTAMPTZ(3),
    "last_queried_at" TIMESTAMPTZ(3),
    "last_answered_at" TIMESTAMPTZ(3),
    "suspected_fake" BOOLEAN NOT NULL DEFAULT false,
    "is_relay" BOOLEAN NOT NULL DEFAULT false,
    "not_queryable" BOOLEAN NOT NULL DEFAULT false,
    "hidden" BOOLEAN NOT NULL DEFAULT false,
    "management_registered" BOOLEAN NOT NULL DEFAULT false,
    "source_id" INTEGER,
    "name" TEXT,
    "map" TEXT,
    "folder" TEXT,
    "game" TEXT,
    "app_id" INTEGER,
    "game_id" TEXT,
    "players" INTEGER NOT NULL DEFAULT 0,
    "max_players" INTEGER NOT NULL DEFAULT 0,
    "bots" INTEGER,
    "password_protected" BOOLEAN,
    "vac_secured" BOOLEAN,
    "dedicated" BOOLEAN,
    "server_type" CHAR(1),
    "os" TEXT,
    "version" TEXT,
    "keywords" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "steam_id" TEXT,
    "tv_port" INTEGER,
    "tv_name" TEXT,
    "ping_ms" INTEGER,
    "player_list" JSONB NOT NULL DEFAULT '[]',
    "rules" JSONB NOT NULL DEFAULT '[]',
    "raw" JSONB,
    "player_names" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "game_server_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "crawl" (
    "id" SERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "source_id" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "listed" INTEGER NOT NULL DEFAULT 0,
    "queried" INTEGER NOT NULL DEFAULT 0,
    "answered" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "written" INTEGER NOT NULL DEFAULT 0,
    "partial" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,

    CONSTRAINT "crawl_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "crawl_run" (
    "id" SERIAL NOT NULL,
    "crawl_id" INTEGER NOT NULL,
    "region" INTEGER NOT NULL,
    "split" TEXT NOT NULL DEFAULT '',
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "found" INTEGER NOT NULL DEFAULT 0,
    "answered" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "partial" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,

    CONSTRAINT "crawl_run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "crawl_batch" (
    "crawl_id" INTEGER NOT NULL,
    "batch_key" TEXT NOT NULL,
    "server_ids" INTEGER[],
    "done_at" TIMESTAMPTZ(3),

    CONSTRAINT "crawl_batch_pkey" PRIMARY KEY ("crawl_id","batch_key")
);

-- CreateTable
CREATE TABLE "blocked_range" (
    "id" SERIAL NOT NULL,
    "cidr" INET NOT NULL,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "blocked_range_pkey" PRIMARY KEY ("id")
);

-- CreateTable (partitioned: Prisma sees a plain table; partitions are managed by the crawler)
CREATE TABLE "server_sample" (
    "game_server_id" INTEGER NOT NULL,
    "crawl_at" TIMESTAMPTZ(3) NOT NULL,
    "crawl_id" INTEGER NOT NULL,
    "online" BOOLEAN NOT NULL,
    "players" SMALLINT NOT NULL,
    "bots" SMALLINT,
    "max_players" SMALLINT NOT NULL,
    "map" TEXT,
    "ping_ms" SMALLINT,

    CONSTRAINT "server_sample_pkey" PRIMARY KEY ("game_server_id","crawl_at","crawl_id")
) PARTITION BY RANGE ("crawl_at");

-- CreateTable
CREATE TABLE "server_day" (
    "game_server_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "samples" INTEGER NOT NULL DEFAULT 0,
    "online" INTEGER NOT NULL DEFAULT 0,
    "players_min" SMALLINT,
    "players_max" SMALLINT,
    "players_sum" INTEGER NOT NULL DEFAULT 0,
    "bots_max" SMALLINT,
    "top_map" TEXT,
    "h_samples" SMALLINT[],
    "h_online" SMALLINT[],
    "h_players_min" SMALLINT[],
    "h_players_max" SMALLINT[],
    "h_players_sum" INTEGER[],
    "h_bots_max" SMALLINT[],
    "h_map" TEXT[],

    CONSTRAINT "server_day_pkey" PRIMARY KEY ("game_server_id","day")
);

-- CreateTable
CREATE TABLE "population_rollup" (
    "resolution" "RollupResolution" NOT NULL,
    "dimension" "PopulationDimension" NOT NULL,
    "key" TEXT NOT NULL,
    "bucket_at" TIMESTAMPTZ(3) NOT NULL,
    "servers_online" REAL NOT NULL,
    "servers_seen" INTEGER NOT NULL,
    "players_avg" REAL NOT NULL,
    "players_peak" INTEGER NOT NULL,
    "bots_avg" REAL NOT NULL DEFAULT 0,

    CONSTRAINT "population_rollup_pkey" PRIMARY KEY ("resolution","dimension","key","bucket_at")
);

-- CreateTable
CREATE TABLE "rollup_state" (
    "name" TEXT NOT NULL,
    "done_until" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rollup_state_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "master_source_name_key" ON "master_source"("name");

-- CreateIndex
CREATE INDEX "game_server_players_id_idx" ON "game_server"("players" DESC, "id");
CREATE INDEX "game_server_name_id_idx" ON "game_server"("name", "id");
CREATE INDEX "game_server_map_id_idx" ON "game_server"("map", "id");
CREATE INDEX "game_server_last_answered_at_id_idx" ON "game_server"("last_answered_at" DESC, "id");
CREATE INDEX "game_server_first_seen_at_id_idx" ON "game_server"("first_seen_at", "id");
CREATE INDEX "game_server_ping_ms_id_idx" ON "game_server"("ping_ms", "id");
CREATE INDEX "game_server_folder_idx" ON "game_server"("folder");
CREATE INDEX "game_server_app_id_idx" ON "game_server"("app_id");
CREATE INDEX "game_server_region_idx" ON "game_server"("region");
CREATE INDEX "game_server_country_idx" ON "game_server"("country");
CREATE INDEX "game_server_status_idx" ON "game_server"("status");
CREATE INDEX "game_server_source_id_idx" ON "game_server"("source_id");
CREATE INDEX "game_server_ip_idx" ON "game_server" USING GIST ("ip" inet_ops);
CREATE INDEX "game_server_keywords_idx" ON "game_server" USING GIN ("keywords");
CREATE INDEX "game_server_name_trgm_idx" ON "game_server" USING GIN ("name" gin_trgm_ops);
CREATE INDEX "game_server_player_names_trgm_idx" ON "game_server" USING GIN ("player_names" gin_trgm_ops);
CREATE UNIQUE INDEX "game_server_address_query_port_key" ON "game_server"("address", "query_port");

-- CreateIndex
CREATE UNIQUE INDEX "crawl_key_key" ON "crawl"("key");
CREATE INDEX "crawl_source_id_started_at_idx" ON "crawl"("source_id", "started_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "crawl_run_crawl_id_region_split_key" ON "crawl_run"("crawl_id", "region", "split");

-- CreateIndex
CREATE UNIQUE INDEX "blocked_range_cidr_key" ON "blocked_range"("cidr");

-- CreateIndex
CREATE INDEX "server_sample_crawl_at_idx" ON "server_sample" USING BRIN ("crawl_at");

-- AddForeignKey
ALTER TABLE "game_server" ADD CONSTRAINT "game_server_source_id_fkey" FOREIGN KEY ("source_id") REFERENCES "master_source"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "crawl" ADD CONSTRAINT "crawl_source_id_fkey" FOREIGN KEY ("source_id") REFERENCES "master_source"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "crawl_run" ADD CONSTRAINT "crawl_run_crawl_id_fkey" FOREIGN KEY ("crawl_id") REFERENCES "crawl"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "crawl_batch" ADD CONSTRAINT "crawl_batch_crawl_id_fkey" FOREIGN KEY ("crawl_id") REFERENCES "crawl"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "server_sample" ADD CONSTRAINT "server_sample_game_server_id_fkey" FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "server_day" ADD CONSTRAINT "server_day_game_server_id_fkey" FOREIGN KEY ("game_server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE CASCADE;
