/**
 * Valve A2S (Source and GoldSrc servers alike): INFO, then PLAYER and RULES through valve/client.ts's
 * queryServer, normalised by valve/server-status.ts. A server that answers INFO is a status (PLAYER
 * and RULES failures only leave those lists empty); one that does not fails with INFO's error.
 * The A2S codec, split handling and challenges: valve/ and docs/protocols.md.
 */
import type { ProtocolModule, ProtocolQueryOptions } from "../adapter";
import { ProtocolError } from "../errors";
import type { ServerStatus } from "../status";
import type { ServerAddress } from "../types";
import { queryServer } from "../valve/client";
import { serverQueryToStatus } from "../valve/server-status";

async function queryStatus(
  address: ServerAddress,
  options: ProtocolQueryOptions = {},
): Promise<ServerStatus> {
  const result = await queryServer(address, options);
  const status = serverQueryToStatus(result);
  if (status === null)
    throw result.errors.info ?? new ProtocolError("UNEXPECTED_RESPONSE", "no A2S_INFO answer");
  return status;
}

/** Valve A2S. */
export const sourceProtocol: ProtocolModule = {
  id: "source",
  name: "Valve A2S (Source, GoldSrc)",
  queryStatus,
};
