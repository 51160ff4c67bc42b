/**
 * A management server (the Bomberman management-server protocol, docs/list-sources.md) as a list source:
 * msQueryGameServers, every entry a registration whose state is what it reported. Never queried; its address
 * may be a host name, which is never resolved. The management server itself is contacted only at an address
 * the policy allows (../outbound-guard.ts).
 */
import {
  queryManagementServer,
  managementEntryToStatus,
  MANAGEMENT_SERVER_PORT,
} from "../../protocol";
import type { ListSource, ListingResult, SourceRecord } from "../list-source";
import type { OutboundGuard } from "../outbound-guard";

export function createManagementSource(
  source: SourceRecord,
  defaults: { timeoutMs: number; guard: OutboundGuard },
): ListSource {
  return {
    splits: () => [{ region: -1, split: "" }],
    async list(_split, signal): Promise<ListingResult> {
      const port = source.port ?? MANAGEMENT_SERVER_PORT;
      // The management server's own host (the operator's) resolved and checked once; the entries it lists never are.
      const checked = await defaults.guard.resolve(source.host, port);
      const reply = await queryManagementServer({
        host: checked.address,
        port,
        timeoutMs: defaults.timeoutMs,
        signal,
      });
      return {
        servers: reply.servers.map((entry) => ({
          host: entry.address,
          queryPort: entry.port,
          gamePort: entry.port,
          protocol: "bomberman" as const,
          managed: true,
          reported: managementEntryToStatus(entry),
        })),
        partial: false,
      };
    },
  };
}
