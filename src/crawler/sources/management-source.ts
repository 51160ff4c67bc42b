/**
 * A management server (seed 002) as a list source: msQueryGameServers, every entry a registration whose
 * state is what it reported. Never queried; its address may be a host name, which is never resolved.
 */
import { queryManagementServer } from '../../protocol/master/management-client';
import { managementEntryToStatus } from '../../protocol/master/management-status';
import type { ListSource, ListingResult, SourceRecord } from '../list-source';

export function createManagementSource(source: SourceRecord, defaults: { timeoutMs: number }): ListSource {
  return {
    splits: () => [{ region: -1, split: '' }],
    async list(_split, signal): Promise<ListingResult> {
      const reply = await queryManagementServer({ host: source.host, ...(source.port ? { port: source.port } : {}), timeoutMs: defaults.timeoutMs, signal });
      return {
        servers: reply.servers.map((entry) => ({
          host: entry.address,
          queryPort: entry.port,
          gamePort: entry.port,
          protocol: 'bomberman' as const,
          managed: true,
          reported: managementEntryToStatus(entry),
        })),
        partial: false,
      };
    },
  };
}
