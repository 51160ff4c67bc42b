/** A Valve UDP master as a list source: one split per region code, each paged to its end. */
import { ALL_MASTER_REGION_CODES } from '../../protocol/master/valve-master-codec';
import { listValveMaster } from '../../protocol/master/valve-master';
import type { ListSource, ListSplit, ListingResult, SourceRecord } from '../list-source';

const DEFAULT_MASTER_PORT = 27011;

interface ValveMasterOptions {
  /** Requests per minute; 0 = unpaced (simulators only). */
  requestsPerMinute?: number;
  retries?: number;
}

function optionsOf(source: SourceRecord): ValveMasterOptions {
  const o = (source.options ?? {}) as Record<string, unknown>;
  const out: ValveMasterOptions = {};
  if (typeof o.requestsPerMinute === 'number') out.requestsPerMinute = o.requestsPerMinute;
  if (typeof o.retries === 'number') out.retries = o.retries;
  return out;
}

export function createValveMasterSource(source: SourceRecord, defaults: { timeoutMs: number }): ListSource {
  const options = optionsOf(source);
  const regions = source.regions.length > 0 ? source.regions : [...ALL_MASTER_REGION_CODES];
  return {
    splits: () => regions.map((region) => ({ region, split: '' })),
    async list(split: ListSplit, signal: AbortSignal): Promise<ListingResult> {
      const result = await listValveMaster({
        host: source.host,
        port: source.port ?? DEFAULT_MASTER_PORT,
        region: split.region,
        filter: source.filter,
        timeoutMs: defaults.timeoutMs,
        signal,
        ...(options.retries !== undefined ? { retries: options.retries } : {}),
        ...(options.requestsPerMinute !== undefined
          ? { pacing: options.requestsPerMinute > 0 ? { requestsPerMinute: options.requestsPerMinute } : false }
          : {}),
      });
      return {
        servers: result.servers.map((a) => ({ host: a.host, queryPort: a.port, region: split.region, protocol: 'source' as const })),
        partial: !result.complete,
        ...(result.stoppedBy ? { error: `${result.stoppedBy.code}: ${result.stoppedBy.message}` } : {}),
      };
    },
  };
}
