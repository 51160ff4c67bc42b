/**
 * `node dist-bench/bench/crawl/answer-status.js [--servers 5000] [--rounds 5] [--baseline DIR]`: CPU and
 * garbage per answer of serverQueryToStatus (src/protocol/valve/server-status.ts), which maps every A2S answer
 * the crawl gets to the status it writes, over the bench fleet's answers (the simulator's own info, players
 * and rules, as the protocol's decoders return them). With `--baseline DIR` (a checkout with its dist built),
 * that build's mapping runs in the same process, alternated round by round, first one then the other.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { serverQueryToStatus, type ServerQueryResult } from "../../src/protocol";
import { playersOf, rulesOf } from "../../src/simulator/content";
import { makeFleet } from "../../src/simulator/make-fleet";
import { sourceInfoOf } from "../../src/simulator/sim-server";
import { bytesPerCall } from "../lib/garbage";

type ToStatus = typeof serverQueryToStatus;

/** Microseconds of CPU per answer over `passes` passes of every answer. */
function usPerAnswer(toStatus: ToStatus, answers: ServerQueryResult[], passes: number): number {
  const start = process.cpuUsage();
  for (let p = 0; p < passes; p++) for (const answer of answers) toStatus(answer);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (answers.length * passes);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      servers: { type: "string" },
      rounds: { type: "string" },
      baseline: { type: "string" },
    },
  });
  const servers = Number(values.servers ?? 5000);
  const rounds = Number(values.rounds ?? 5);
  const answers: ServerQueryResult[] = makeFleet({
    count: servers,
    seed: 1,
    hosts: ["127.0.0.1"],
  }).map((spec) => {
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
  });
  const perServer = (count: (a: ServerQueryResult) => number): string =>
    (answers.reduce((sum, a) => sum + count(a), 0) / answers.length).toFixed(1);
  const contenders: Array<{ label: string; toStatus: ToStatus }> = [
    { label: "this build", toStatus: serverQueryToStatus },
  ];
  if (values.baseline !== undefined) {
    const module = path.resolve(values.baseline, "dist/protocol/valve/server-status.js");
    const baseline = require(module) as { serverQueryToStatus: ToStatus };
    contenders.unshift({
      label: `baseline (${values.baseline})`,
      toStatus: baseline.serverQueryToStatus,
    });
  }
  // Warm-up: every contender's code optimised before any round counts.
  for (const c of contenders) usPerAnswer(c.toStatus, answers, 3);
  console.log(
    `${answers.length} answers, ${perServer((a) => a.players?.players.length ?? 0)} players and ${perServer((a) => a.rules?.rules.length ?? 0)} rules each on average`,
  );
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? contenders : [...contenders].reverse();
    const figures = order.map(
      (c) =>
        `${c.label} ${usPerAnswer(c.toStatus, answers, 20).toFixed(2)} us, ${bytesPerCall((i) => c.toStatus(answers[i % answers.length]!), 200).toFixed(0)} B`,
    );
    console.log(`round ${round}: ${figures.join("; ")} per answer`);
  }
}

main();
