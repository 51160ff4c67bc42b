/**
 * `node dist-bench/bench/crawl/answer-status.js [--servers 5000] [--rounds 5] [--baseline DIR]`: CPU and
 * garbage per answer of serverQueryToStatus (src/protocol/valve/server-status.ts), which maps every A2S answer
 * the crawl gets to the status it writes, over the bench fleet's answers (the simulator's own info, players
 * and rules, as the protocol's decoders return them). With `--baseline DIR` (a checkout with its dist built),
 * that build's mapping runs in the same process, alternated round by round, first one then the other.
 */
import { serverQueryToStatus, type ServerQueryResult } from "../../src/protocol";
import { makeFleet } from "../../src/simulator/make-fleet";
import {
  baselineModule,
  bytesPerCall,
  pieceArgs,
  printAlternatedRounds,
  usPerCall,
} from "../lib/per-call";
import { simulatedAnswerOf } from "../lib/simulated-answer";

type ToStatus = typeof serverQueryToStatus;

function main(): void {
  const { servers, rounds, baseline } = pieceArgs(5000);
  const answers: ServerQueryResult[] = makeFleet({
    count: servers,
    seed: 1,
    hosts: ["127.0.0.1"],
  }).map(simulatedAnswerOf);
  const perServer = (count: (a: ServerQueryResult) => number): string =>
    (answers.reduce((sum, a) => sum + count(a), 0) / answers.length).toFixed(1);
  const contenders: Array<{ label: string; toStatus: ToStatus }> = [
    { label: "this build", toStatus: serverQueryToStatus },
  ];
  if (baseline !== undefined) {
    const loaded = baselineModule<{ serverQueryToStatus: ToStatus }>(
      baseline,
      "dist/protocol/valve/server-status.js",
    );
    contenders.unshift({ label: `baseline (${baseline})`, toStatus: loaded.serverQueryToStatus });
  }
  // Warm-up: every contender's code optimised before any round counts.
  for (const c of contenders) usPerCall(c.toStatus, answers, 3);
  console.log(
    `${answers.length} answers, ${perServer((a) => a.players?.players.length ?? 0)} players and ${perServer((a) => a.rules?.rules.length ?? 0)} rules each on average`,
  );
  printAlternatedRounds(
    contenders,
    rounds,
    (c) =>
      `${c.label} ${usPerCall(c.toStatus, answers, 20).toFixed(2)} us, ${bytesPerCall((i) => c.toStatus(answers[i % answers.length]!), 200).toFixed(0)} B`,
    "answer",
  );
}

main();
