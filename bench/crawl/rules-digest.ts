/**
 * `node dist-bench/bench/crawl/rules-digest.js [--servers 5000] [--rounds 5] [--baseline DIR]`: CPU per answer
 * of the rules digest the crawl's write computes for every answer (src/crawler/store/rules-digest.ts), over the
 * rules of the bench fleet's servers (the simulator's own, as the crawl's answers carry them). With
 * `--baseline DIR` (a checkout with its dist built), that build's digest runs in the same process, alternated
 * round by round, first one then the other.
 */
import path from "node:path";
import { rulesDigestOf } from "../../src/crawler/store/rules-digest";
import { rulesOf } from "../../src/simulator/content";
import { makeFleet } from "../../src/simulator/make-fleet";
import { pieceArgs, usPerCall } from "../lib/per-call";

type Digest = typeof rulesDigestOf;
type Answer = Parameters<Digest>[0];

function main(): void {
  const { servers, rounds, baseline } = pieceArgs(5000);
  const answers: Answer[] = makeFleet({ count: servers, seed: 1, hosts: ["127.0.0.1"] })
    .map((spec) => ({ rules: rulesOf(spec), raw: null }))
    .filter((a) => a.rules.length > 0);
  const ruleCount = answers.reduce((sum, a) => sum + a.rules.length, 0) / answers.length;
  const contenders: Array<{ label: string; digest: Digest }> = [
    { label: "this build", digest: rulesDigestOf },
  ];
  if (baseline !== undefined) {
    const module = path.resolve(baseline, "dist/crawler/store/rules-digest.js");
    const loaded = require(module) as { rulesDigestOf: Digest };
    contenders.unshift({ label: `baseline (${baseline})`, digest: loaded.rulesDigestOf });
  }
  // Warm-up: every contender's code optimised before any round counts.
  for (const c of contenders) usPerCall(c.digest, answers, 3);
  console.log(
    `${answers.length} answers with rules (of ${servers} servers), ${ruleCount.toFixed(0)} rules each on average`,
  );
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? contenders : [...contenders].reverse();
    const figures = order.map(
      (c) => `${c.label} ${usPerCall(c.digest, answers, 20).toFixed(2)} us`,
    );
    console.log(`round ${round}: ${figures.join(", ")} per answer`);
  }
}

main();
