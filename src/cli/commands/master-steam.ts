/** `gsindex master --steam-web-api`: the Steam Web API listing behind the master command. */
import { listSteamWebApi, formatAddress } from "../../protocol";
import type { CommandIo } from "./io";
import { type MasterCommandEnv, printListing } from "./master-listing";

export interface SteamWebApiListingRequest {
  io: CommandIo;
  env: MasterCommandEnv;
  filter: string;
  json: boolean;
  rate: number | undefined;
  timeoutMs: number | undefined;
  limitPerCall: number | undefined;
  signal: AbortSignal;
}

export async function runSteamWebApiListing(request: SteamWebApiListingRequest): Promise<number> {
  const { io, env } = request;
  const key = env.steamWebApiKey?.trim();
  if (!key) {
    io.stderr.write(
      "gsindex master --steam-web-api: set STEAM_WEB_API_KEY to your Steam Web API key\n",
    );
    return 2;
  }
  const result = await listSteamWebApi({
    key,
    baseUrl: env.steamWebApiUrl?.trim() || undefined,
    filter: request.filter,
    pacing:
      request.rate === undefined
        ? undefined
        : request.rate === 0
          ? false
          : { requestsPerMinute: request.rate },
    timeoutMs: request.timeoutMs,
    limitPerCall: request.limitPerCall || undefined,
    signal: request.signal,
  });
  const why = result.stoppedBy
    ? `: ${result.stoppedBy.code}: ${result.stoppedBy.message}`
    : result.cappedFilters.length > 0
      ? `: ${result.cappedFilters.length} part(s) still capped`
      : "";
  // The Web API has no seed to resume from: a partial listing is re-run.
  printListing(
    io,
    request.json,
    {
      servers: result.servers.map((s) => formatAddress(s.address)),
      complete: result.complete,
      resumeFrom: null,
    },
    why,
  );
  if (request.json && !result.complete) io.stderr.write(`gsindex master: incomplete${why}\n`);
  if (result.stoppedBy && result.servers.length === 0) return 1;
  return result.complete ? 0 : 3;
}
