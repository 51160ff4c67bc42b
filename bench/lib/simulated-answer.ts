import type { ListingRow } from "../../src/crawler/store/server-store";
import { serverQueryToStatus, type ServerQueryResult, type ServerStatus } from "../../src/protocol";
import { playersOf, rulesOf } from "../../src/simulator/content";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { sourceInfoOf } from "../../src/simulator/sim-server";

/** What queryServer returns for a simulated server: its own info, players and rules, as the decoders give them. */
export function simulatedAnswerOf(spec: SimServerSpec): ServerQueryResult {
  const players = playersOf(spec).map((p) => ({
    index: 0,
    name: p.name,
    score: p.score,
    duration: p.durationSeconds,
  }));
  const rules = rulesOf(spec);
  return {
    info: { info: sourceInfoOf(spec), pingMs: 1 },
    players: { count: players.length, players },
    rules: { count: rules.length, rules },
    pingMs: 1,
    errors: {},
  };
}

/** The answer the crawler would store for this server: its replies through the protocol's own mapping. */
export function simulatedStatusOf(spec: SimServerSpec): ServerStatus {
  const status = serverQueryToStatus(simulatedAnswerOf(spec));
  if (!status) throw new Error(`no status for ${spec.host}:${spec.queryPort}`);
  return status;
}

/** The server as a Valve master's listing gives it to the crawl's listing write. */
export function simulatedListingRow(spec: SimServerSpec): ListingRow {
  return {
    address: spec.host,
    ip: spec.host,
    queryPort: spec.queryPort,
    gamePort: null,
    region: spec.region,
    protocol: "source",
    notQueryable: false,
    isRelay: false,
    managed: false,
    reported: null,
  };
}
