/** Counts every query outcome (by protocol, and 'ok' or the ProtocolError code) for /metrics. */
import type { Querier } from "./querier";

export interface OutcomeCounter {
  inc(labels: { protocol: string; outcome: string }): void;
}

export function countOutcomes(querier: Querier, counter: OutcomeCounter): Querier {
  return {
    async query(target, signal) {
      const outcome = await querier.query(target, signal);
      counter.inc({
        protocol: target.protocol,
        outcome: outcome.kind === "answered" ? "ok" : outcome.code,
      });
      return outcome;
    },
  };
}
