/**
 * The demo's fleet lives through a compressed day: each server's population follows a daily curve
 * (quiet at night, a peak in the evening) squeezed into `dayMs`, with its own phase and size, so the
 * charts of a one-minute demo already have shape. Deterministic from the server's seed.
 */
import { hash32 } from "../simulator/random";
import type { RunningFleet } from "../simulator/fleet";

/** 0..1: the share of a server's usual peak that is online at `phase` (0..1 through its day). */
export function dayCurve(phase: number): number {
  const evening = Math.exp(-((phase - 0.8) ** 2) / 0.02);
  const afternoon = 0.5 * Math.exp(-((phase - 0.55) ** 2) / 0.03);
  return Math.min(1, 0.08 + evening + afternoon);
}

export function populationAt(
  seed: number,
  maxPlayers: number,
  nowMs: number,
  dayMs: number,
): number {
  const h = hash32(seed, 7);
  const offset = (h % 1000) / 1000 / 4; // servers in different time zones peak at different times
  const size = 0.3 + ((h >>> 10) % 700) / 1000; // and some are more popular than others
  const phase = (((nowMs / dayMs + offset) % 1) + 1) % 1;
  return Math.round(maxPlayers * size * dayCurve(phase));
}

/** Moves every server of the fleet along its curve every `stepMs`; returns a stop function. */
export function drivePopulation(
  fleet: RunningFleet,
  options: { dayMs: number; stepMs: number; now?: () => number },
): () => void {
  const now = options.now ?? Date.now;
  const step = (): void => {
    const t = now();
    for (const server of fleet.servers) {
      const { state, seed } = server.spec;
      server.setPopulation(populationAt(seed ?? 0, state.maxPlayers, t, options.dayMs));
    }
  };
  step();
  const timer = setInterval(step, options.stepMs);
  timer.unref();
  return () => clearInterval(timer);
}
