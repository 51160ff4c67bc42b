import type { ServerQueryResult } from "../../src/protocol";
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
