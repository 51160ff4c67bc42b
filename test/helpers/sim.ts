import { makeServerSpec, type FleetMix } from "../../src/simulator/make-fleet";
import type { SimBehaviour, SimServerSpec, SimServerState } from "../../src/simulator/fleet-spec";

/** No unusual servers: tests choose each behaviour themselves. */
export const CALM_MIX: FleetMix = {
  challengeAll: 0,
  challengePlayersRules: 0,
  legacyChallenge: 0,
  bothInfo: 0,
  bigRules: 0,
  compressed: 0,
  lossy: 0,
  duplicating: 0,
  reordering: 0,
  slow: 0,
  silent: 0,
  malformed: 0,
  noRules: 0,
};

/** One loopback server spec (port picked by the OS at start) with exactly the given behaviour. */
export function simSpec(
  behaviour: Partial<SimBehaviour>,
  options: {
    index?: number;
    seed?: number;
    host?: string;
    state?: Partial<SimServerState>;
    bigRules?: boolean;
  } = {},
): SimServerSpec {
  const base = makeServerSpec(
    {
      count: 1_000_000,
      seed: options.seed ?? 42,
      basePort: 0,
      mix: { ...CALM_MIX, bigRules: options.bigRules ? 1 : 0 },
    },
    options.index ?? 0,
  );
  const spec: SimServerSpec = {
    ...base,
    host: options.host ?? "127.0.0.1",
    behaviour,
    state: { ...base.state, ...options.state },
  };
  if (options.bigRules && !spec.state.keywords.includes("bigrules"))
    spec.state.keywords = [...spec.state.keywords, "bigrules"];
  return spec;
}
