/**
 * A Valve UDP master as a list source: one split per region code, each paged to its end. A listing cut
 * short (the master's rate limit) returns its last address as the resume cursor; the region's next listing
 * goes on from there, so a region longer than one rate-limit window is covered over successive crawls.
 */
import {
  ALL_MASTER_REGION_CODES,
  DEFAULT_MASTER_REQUESTS_PER_MINUTE,
  FIRST_SEED,
  formatAddress,
  parseIpv4Address,
  listValveMaster,
  type ServerAddress,
} from "../../protocol";
import type {
  ListedPageSink,
  ListedServer,
  ListSource,
  ListSplit,
  ListingResult,
  SourceRecord,
} from "../list-source";
import type { MasterPacer } from "../master-pace";
import type { OutboundGuard } from "../outbound-guard";

const DEFAULT_MASTER_PORT = 27011;

interface ValveMasterOptions {
  /** Requests per minute; 0 = unpaced (simulators only). */
  requestsPerMinute?: number;
  retries?: number;
}

function optionsOf(source: SourceRecord): ValveMasterOptions {
  const o = (source.options ?? {}) as Record<string, unknown>;
  const out: ValveMasterOptions = {};
  if (typeof o.requestsPerMinute === "number") out.requestsPerMinute = o.requestsPerMinute;
  if (typeof o.retries === "number") out.retries = o.retries;
  return out;
}

const isFirstSeed = (a: ServerAddress): boolean =>
  a.host === FIRST_SEED.host && a.port === FIRST_SEED.port;

/** The seed a cursor stands for; a cursor that is not an IPv4 address:port (hand-edited) starts over. */
function seedOf(cursor: string | undefined): ServerAddress | undefined {
  if (cursor === undefined) return undefined;
  try {
    const seed = parseIpv4Address(cursor);
    return isFirstSeed(seed) ? undefined : seed;
  } catch {
    return undefined;
  }
}

export function createValveMasterSource(
  source: SourceRecord,
  defaults: { timeoutMs: number; guard: OutboundGuard; pacer?: MasterPacer },
): ListSource {
  const options = optionsOf(source);
  const requestsPerMinute = options.requestsPerMinute ?? DEFAULT_MASTER_REQUESTS_PER_MINUTE;
  const regions = source.regions.length > 0 ? source.regions : [...ALL_MASTER_REGION_CODES];
  return {
    splits: () => regions.map((region) => ({ region, split: "" })),
    async list(
      split: ListSplit,
      signal: AbortSignal,
      resumeCursor?: string,
      onPage?: ListedPageSink,
    ): Promise<ListingResult> {
      const seed = seedOf(resumeCursor);
      const listed = (addresses: ServerAddress[]): ListedServer[] =>
        addresses.map((a) => ({
          host: a.host,
          queryPort: a.port,
          region: split.region,
          protocol: "source" as const,
        }));
      const port = source.port ?? DEFAULT_MASTER_PORT;
      // Resolved and checked once, here: listValveMaster gets the checked IP and resolves nothing.
      const master = await defaults.guard.resolve(source.host, port);
      const result = await listValveMaster({
        host: master.address,
        port,
        region: split.region,
        filter: source.filter,
        timeoutMs: defaults.timeoutMs,
        signal,
        ...(seed ? { seed } : {}),
        ...(options.retries !== undefined ? { retries: options.retries } : {}),
        ...(onPage
          ? { onBatch: (page: ServerAddress[]) => onPage(listed(page)), collect: false }
          : {}),
        // The master limits requests per client, not per listing: its regions listed at once share one pace.
        pacing:
          requestsPerMinute <= 0
            ? false
            : {
                requestsPerMinute,
                ...(defaults.pacer
                  ? {
                      waitTurn: (s?: AbortSignal) =>
                        defaults.pacer!.waitTurn(
                          `${master.address}:${port}`,
                          60_000 / requestsPerMinute,
                          s,
                        ),
                    }
                  : {}),
              },
      });
      // A resumed listing did not see the pages before its seed: absences in it must not count either.
      const error = result.stoppedBy
        ? `${result.stoppedBy.code}: ${result.stoppedBy.message}`
        : seed
          ? `resumed after ${formatAddress(seed)}: the pages before it were listed by an earlier crawl`
          : undefined;
      return {
        servers: listed(result.servers),
        partial: !result.complete || seed !== undefined,
        ...(!result.complete
          ? { truncation: "CUT_SHORT" as const }
          : seed !== undefined
            ? { truncation: "RESUMED" as const }
            : {}),
        ...(error !== undefined ? { error } : {}),
        ...(result.resumeFrom && !isFirstSeed(result.resumeFrom)
          ? { resumeCursor: formatAddress(result.resumeFrom) }
          : {}),
      };
    },
  };
}
