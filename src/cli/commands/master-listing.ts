/** What both listings of `gsindex master` (a Valve UDP master, the Steam Web API) share: the environment they read and how a listing is printed. */
import type { CommandIo } from "./io";

export interface MasterCommandEnv {
  steamWebApiKey?: string;
  steamWebApiUrl?: string;
}

export function printListing(
  io: CommandIo,
  json: boolean,
  result: { servers: string[]; complete: boolean; resumeFrom: string | null },
  hint: string,
): void {
  if (json) {
    io.stdout.write(
      JSON.stringify({
        servers: result.servers,
        complete: result.complete,
        resumeFrom: result.resumeFrom,
      }) + "\n",
    );
  } else {
    if (result.servers.length > 0) io.stdout.write(result.servers.join("\n") + "\n");
    io.stderr.write(
      `${result.servers.length} servers${result.complete ? "" : ` (INCOMPLETE${hint})`}\n`,
    );
  }
}
