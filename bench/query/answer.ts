/**
 * What a contender learned about one server, in one shape for every library, and how it is checked
 * against the fleet spec (the simulator answers from the spec, so the spec is the truth).
 */
import { playersOf, rulesOf } from "../../src/simulator/content";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";

export interface Answer {
  info?: {
    name: string;
    map: string;
    folder: string;
    game: string;
    players: number;
    maxPlayers: number;
  };
  players?: Array<{ name: string; score: number }>;
  rules?: Record<string, string>;
  error?: string;
}

export interface Correctness {
  /** Servers whose INFO, PLAYER and RULES all matched the spec. */
  allCorrect: number;
  infoCorrect: number;
  playersCorrect: number;
  rulesCorrect: number;
  failed: number;
  /** A few examples of what went wrong, for the report. */
  examples: string[];
}

const playerKey = (p: { name: string; score: number }): string => `${p.name}\u0000${p.score}`;

/** Compares an answer with the spec. Player lists are compared as multisets (libraries reorder bots). */
export function check(
  spec: SimServerSpec,
  answer: Answer,
): { info: boolean; players: boolean; rules: boolean; why: string | null } {
  const s = spec.state;
  const i = answer.info;
  const info =
    i !== undefined &&
    i.name === s.name &&
    i.map === s.map &&
    i.folder === s.folder &&
    i.game === s.game &&
    i.players === Math.min(s.players, 255) &&
    i.maxPlayers === Math.min(s.maxPlayers, 255);
  const expectedPlayers = playersOf(spec).map(playerKey).sort();
  const gotPlayers = (answer.players ?? []).map(playerKey).sort();
  const players =
    answer.players !== undefined &&
    expectedPlayers.length === gotPlayers.length &&
    expectedPlayers.every((p, n) => p === gotPlayers[n]);
  const expectedRules = rulesOf(spec);
  const gotRules = answer.rules;
  const rules =
    gotRules !== undefined &&
    Object.keys(gotRules).length === expectedRules.length &&
    expectedRules.every((r) => gotRules[r.name] === r.value);
  let why: string | null = null;
  if (answer.error !== undefined) why = answer.error;
  else if (!info) why = `info differs: ${JSON.stringify(i)}`;
  else if (!players)
    why = `players differ: ${gotPlayers.length} vs ${expectedPlayers.length} expected`;
  else if (!rules)
    why = `rules differ: ${gotRules === undefined ? "none" : Object.keys(gotRules).length} vs ${expectedRules.length} expected`;
  return { info, players, rules, why };
}

export function score(specs: readonly SimServerSpec[], answers: readonly Answer[]): Correctness {
  const out: Correctness = {
    allCorrect: 0,
    infoCorrect: 0,
    playersCorrect: 0,
    rulesCorrect: 0,
    failed: 0,
    examples: [],
  };
  specs.forEach((spec, n) => {
    const answer = answers[n] ?? { error: "no answer" };
    const c = check(spec, answer);
    if (c.info) out.infoCorrect++;
    if (c.players) out.playersCorrect++;
    if (c.rules) out.rulesCorrect++;
    if (answer.error !== undefined) out.failed++;
    if (c.info && c.players && c.rules) out.allCorrect++;
    else if (out.examples.length < 3)
      out.examples.push(
        `${spec.host}:${spec.queryPort} (${JSON.stringify(spec.behaviour)}): ${(c.why ?? "").slice(0, 200)}`,
      );
  });
  return out;
}
