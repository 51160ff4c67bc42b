/**
 * What the crawler needs from a list source (a Valve master, the Steam Web API, a management server,
 * a fixed address list): the splits to list (Valve regions, query splits) and, per split, the
 * servers it found. Adapters over the protocol library live in src/crawler/sources/.
 */
import type { ProtocolId, ServerStatus } from "../protocol";

/** One listing unit of a source. `region` is a Valve region code, or -1 when the source has none. */
export interface ListSplit {
  region: number;
  /** Query split description ('' for none). */
  split: string;
}

/** State a source reports itself (management registrations; Steam Web API records). */
export type ReportedState = Partial<Omit<ServerStatus, "protocol">> & {
  players: number;
  maxPlayers: number;
};

export interface ListedServer {
  /** IP literal, or a host name (never resolved unless allow-listed). */
  host: string;
  queryPort: number;
  gamePort?: number | null;
  /** Defaults to the split's region. */
  region?: number | null;
  /** @defaultValue 'source' */
  protocol?: ProtocolId;
  /** Registered with a management server: never queried; `reported` is its state, sampled as is. */
  managed?: boolean;
  reported?: ReportedState | null;
}

/**
 * CAPPED: a part of the query stayed at the source's per-call cap; CUT_SHORT: stopped before its end (rate
 * limit, timeout, error); RESUMED: began where an earlier crawl's listing of the split stopped.
 */
export type ListingTruncation = "CAPPED" | "CUT_SHORT" | "RESUMED";

export interface ListingResult {
  servers: ListedServer[];
  /** The listing stopped short (rate limit, cap, timeout): absences must not count. */
  partial: boolean;
  /** Why it did not cover its split (crawl coverage; a partial listing without one counts as CUT_SHORT). */
  truncation?: ListingTruncation;
  /** Parts of the query still at the source's per-call cap, which could not be split further (Steam Web API). */
  cappedParts?: number;
  error?: string;
  /**
   * Where a listing cut short can go on (the source's own format, opaque to the crawler; a Valve master's
   * last address). The crawler keeps it on the run and hands it back at the split's next listing.
   */
  resumeCursor?: string;
}

/**
 * Takes a listing's servers a page at a time, as the source finds them, and writes them; the source waits
 * for it before it asks for more. What it throws ends the listing.
 */
export type ListedPageSink = (servers: ListedServer[]) => Promise<void>;

export interface ListSource {
  splits(): ListSplit[];
  /**
   * `resumeCursor`: the split's previous listing stopped short there (its result's resumeCursor).
   * `onPage`: a source that pages (a Valve master) may hand its servers over as it finds them, each once;
   * those are then left out of the result's `servers`, so a long listing is not held until its end.
   */
  list(
    split: ListSplit,
    signal: AbortSignal,
    resumeCursor?: string,
    onPage?: ListedPageSink,
  ): Promise<ListingResult>;
}

/** The master_source row as the crawler sees it. */
export interface SourceRecord {
  id: number;
  name: string;
  kind: "VALVE_UDP" | "STEAM_WEB_API" | "MANAGEMENT" | "ADDRESS_LIST" | "INDEX";
  host: string;
  port: number | null;
  filter: string;
  regions: number[];
  intervalMs: number;
  enabled: boolean;
  options: unknown;
}

export type ListSourceFactory = (source: SourceRecord) => ListSource;

/** The region a split stands for, as a label safe inside job ids and batch keys. */
export function splitLabel(split: ListSplit, index: number): string {
  return `${split.region < 0 ? "all" : `r${split.region}`}-${index}`;
}
