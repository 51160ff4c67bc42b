/** Wires the crawl steps to the configuration: list sources, the querier per protocol, settings. */
import type { Config } from "../shared/config";
import type { Db } from "../shared/db";
import type { Logger } from "../shared/logger";
import type { CrawlDeps, CrawlEvent, CrawlSettings, JobSink } from "./crawl-jobs";
import type { ListSourceFactory } from "./list-source";
import type { MasterPacer } from "./master-pace";
import { limitInFlight, type Querier } from "./querier";
import { createProtocolQuerier } from "./queriers/protocol-querier";
import { createListSourceFactory } from "./sources";
import { createBlockedRangeReader } from "./store/blocked-ranges";

export function crawlSettingsOf(config: Config): CrawlSettings {
  return {
    queryBatchSize: config.queryBatchSize,
    offlineAfterFailures: config.offlineAfterFailures,
    delistAfterMissedCrawls: config.delistAfterMissedCrawls,
    fakePortsPerIp: config.fakePortsPerIp,
    farmRuleExemptRanges: config.farmRuleExemptRanges,
    fakePlayers: {
      infoExcess: config.fakeInfoPlayersExcess,
      sameNamePlayers: config.fakeSameNamePlayers,
      zeroDurationPlayers: config.fakeZeroDurationPlayers,
      sharedNameServers: config.fakeSharedNameServers,
      sharedNamesPerServer: config.fakeSharedNamesPerServer,
    },
    listTimeoutMs: config.listTimeoutMs,
    addressAllowList: config.addressAllowList,
    queryFromIndex: config.queryFromIndex,
  };
}

export function createDefaultQuerier(config: Config): Querier {
  const options = { timeoutMs: config.queryTimeoutMs, retries: config.queryRetries };
  // Every protocol, Valve A2S included, through the protocol registry.
  return createProtocolQuerier(options);
}

export function buildCrawlDeps(input: {
  config: Config;
  db: Db;
  logger: Logger;
  sink: JobSink;
  querier?: Querier;
  listSources?: ListSourceFactory;
  /** Shared by the worker processes (Redis or PostgreSQL); by default this process's own. */
  masterPacer?: MasterPacer;
  onEvent?: (event: CrawlEvent) => void;
}): CrawlDeps {
  return {
    db: input.db,
    logger: input.logger,
    sink: input.sink,
    listSources:
      input.listSources ??
      createListSourceFactory(
        input.config,
        {},
        {
          blockedRanges: createBlockedRangeReader(input.db),
          ...(input.masterPacer ? { masterPacer: input.masterPacer } : {}),
        },
      ),
    // One cap for the whole process (QUERY_CONCURRENCY), shared by every batch job it runs.
    querier: limitInFlight(
      input.querier ?? createDefaultQuerier(input.config),
      input.config.queryConcurrency,
    ),
    settings: crawlSettingsOf(input.config),
    ...(input.onEvent ? { onEvent: input.onEvent } : {}),
  };
}
