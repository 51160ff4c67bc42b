/** Prisma rows → API objects for sources, crawls and blocked ranges. */
import type {
  BlockedRange as BlockedRangeRow,
  Crawl as CrawlRow,
  CrawlRun as CrawlRunRow,
  MasterSource as MasterSourceRow,
} from "../../generated/prisma/client";
import { toId } from "../../shared/ids";
import {
  BlockedRange,
  Crawl,
  CrawlRun,
  ListingTruncation,
  MasterSource,
  MasterSourceKind,
  SharedNamesCheck,
} from "./source.type";

const SHARED_NAMES_CHECKS: Record<string, SharedNamesCheck> = {
  checked: SharedNamesCheck.CHECKED,
  "over budget": SharedNamesCheck.OVER_BUDGET,
  failed: SharedNamesCheck.FAILED,
  skipped: SharedNamesCheck.SKIPPED,
};

export function toMasterSource(r: MasterSourceRow): MasterSource {
  return Object.assign(new MasterSource(), {
    id: r.id,
    name: r.name,
    kind: r.kind as MasterSourceKind,
    host: r.host,
    port: r.port,
    filter: r.filter,
    regions: r.regions,
    intervalMs: r.intervalMs,
    enabled: r.enabled,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  });
}

export function toCrawl(r: CrawlRow): Crawl {
  return Object.assign(new Crawl(), {
    id: toId(r.id),
    sourceId: r.sourceId,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    listed: r.listed,
    found: r.listed,
    queried: r.queried,
    answered: r.answered,
    failed: r.failed,
    timedOut: r.timedOut,
    refused: r.refused,
    written: r.written,
    coverage: r.listed > 0 ? Math.min(1, r.answered / r.listed) : null,
    listedAt: r.listedAt,
    listingMs: r.listedAt ? Math.max(0, r.listedAt.getTime() - r.startedAt.getTime()) : null,
    queryStartedAt: r.queryStartedAt,
    queriedAt: r.queriedAt,
    queryMs:
      r.queryStartedAt && r.queriedAt
        ? Math.max(0, r.queriedAt.getTime() - r.queryStartedAt.getTime())
        : null,
    dataAsOf: r.queriedAt ?? r.listedAt,
    partial: r.partial,
    error: r.error,
    sharedNamesCheck: (r.sharedNames !== null && SHARED_NAMES_CHECKS[r.sharedNames]) || null,
  });
}

export function toCrawlRun(r: CrawlRunRow): CrawlRun {
  return Object.assign(new CrawlRun(), {
    region: r.region,
    split: r.split,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    found: r.found,
    answered: r.answered,
    failed: r.failed,
    partial: r.partial,
    truncation: r.truncation as ListingTruncation | null,
    cappedParts: r.cappedParts,
    error: r.error,
  });
}

export function toBlockedRange(r: BlockedRangeRow): BlockedRange {
  return Object.assign(new BlockedRange(), {
    id: r.id,
    cidr: r.cidr,
    reason: r.reason,
    createdAt: r.createdAt,
  });
}
