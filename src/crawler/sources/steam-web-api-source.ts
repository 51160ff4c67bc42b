/**
 * The Steam Web API (IGameServersService/GetServerList) as a list source. It has no regions: one
 * split, which the protocol library splits further until no part is capped. Its records index a
 * server before its own A2S answer arrives.
 */
import { listSteamWebApi } from "../../protocol";
import type { ListSource, ListingResult, SourceRecord } from "../list-source";
import type { OutboundGuard } from "../outbound-guard";

export function createSteamWebApiSource(
  source: SourceRecord,
  defaults: { key: string | undefined; timeoutMs: number; guard: OutboundGuard },
): ListSource {
  const o = (source.options ?? {}) as Record<string, unknown>;
  // host is the API's host (api.steampowered.com); options.baseUrl overrides (simulated endpoint).
  const baseUrl =
    typeof o.baseUrl === "string"
      ? o.baseUrl
      : `https://${source.host}${source.port ? `:${source.port}` : ""}`;
  const requestsPerMinute =
    typeof o.requestsPerMinute === "number" ? o.requestsPerMinute : undefined;
  // The endpoint's cap per call: a simulated endpoint may have a smaller one than Valve's 10,000.
  const limitPerCall =
    typeof o.limitPerCall === "number" && Number.isInteger(o.limitPerCall) && o.limitPerCall > 0
      ? o.limitPerCall
      : undefined;
  return {
    splits: () => [{ region: -1, split: "" }],
    async list(_split, signal): Promise<ListingResult> {
      if (defaults.key === undefined)
        return {
          servers: [],
          partial: true,
          truncation: "CUT_SHORT",
          error: "STEAM_WEB_API_KEY is not set",
        };
      const result = await listSteamWebApi({
        key: defaults.key,
        baseUrl,
        filter: source.filter,
        signal,
        // Every call from an address the policy allows, resolved once per call (../outbound-guard.ts).
        fetch: (url, init) => defaults.guard.fetch(url, init),
        ...(requestsPerMinute !== undefined
          ? { pacing: requestsPerMinute > 0 ? { requestsPerMinute } : false }
          : {}),
        ...(limitPerCall !== undefined ? { limitPerCall } : {}),
      });
      return {
        servers: result.servers.map((s) => ({
          host: s.address.host,
          queryPort: s.address.port,
          gamePort: s.gamePort,
          region: s.region !== null && s.region >= 0 && s.region <= 255 ? s.region : null,
          protocol: "source" as const,
          reported: s.status,
        })),
        partial: !result.complete,
        // A listing that stopped lists what it had not reached among its capped filters: those are not caps.
        ...(result.stoppedBy
          ? { truncation: "CUT_SHORT" as const }
          : result.cappedFilters.length > 0
            ? { truncation: "CAPPED" as const, cappedParts: result.cappedFilters.length }
            : {}),
        ...(result.stoppedBy
          ? { error: `${result.stoppedBy.code}: ${result.stoppedBy.message}` }
          : {}),
      };
    },
  };
}
