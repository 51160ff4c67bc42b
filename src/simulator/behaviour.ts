import type { SimBehaviour, SimServerSpec } from "./fleet-spec";

/** A well-behaved modern Source server: answers everything at once, no challenge, splits past 1248 bytes. */
export const DEFAULT_SIM_BEHAVIOUR: SimBehaviour = {
  infoFormat: "source",
  challenge: "none",
  legacyChallenge: false,
  splitFormat: "source",
  maxPacketBytes: 1248,
  compress: false,
  sizeField: true,
  lossRate: 0,
  duplicateRate: 0,
  reorder: false,
  delayMs: 0,
  silent: false,
  malformed: false,
  answersRules: true,
};

/** The behaviour a spec gets, defaults filled in. */
export function behaviourOf(spec: SimServerSpec): SimBehaviour {
  return { ...DEFAULT_SIM_BEHAVIOUR, ...spec.behaviour };
}
