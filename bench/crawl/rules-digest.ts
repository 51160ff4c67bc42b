/**
 * `node dist-bench/bench/crawl/rules-digest.js [--servers 5000] [--rounds 5] [--baseline DIR]`: CPU per answer
 * of the rules digest the crawl's write computes for every answer (src/crawler/store/rules-digest.ts), over the
 * rules of the bench fleet's servers (the simulator's own, as the crawl's answers carry them). With
 * `--baseline DIR` (a checkout with its dist built), that build's digest runs in the same process, alternated
 * round by round, first one then the other. This build's digest runs twice: over the rules as decoded, and
 * packed as a crawl's batch holds them (src/crawler/store/held-rules.ts).
 */
import { PackedRules } from "../../src/crawler/store/held-rules";
import { rulesDigestOf } from "../../src/crawler/store/rules-digest";
import type { StatusRule } from "../../src/protocol";
import { rulesOf } from "../../src/simulator/content";
import { makeFleet } from "../../src/simulator/make-fleet";
import { baselineModule, pieceArgs, printAlternatedRounds, usPerCall } from "../lib/per-call";

type Digest = (answer: { rules: StatusRule[]; raw: null }) => string;
type Answer = Parameters<Digest>[0];

function main(): void {
  const { servers, rounds, baseline } = pieceArgs(5000);
  const answers: Answer[] = makeFleet({ count: servers, seed: 1, hosts: ["127.0.0.1"] })
    .map((spec) => ({ rules: rulesOf(spec), raw: null }))
    .filter((a) => a.rules.length > 0);
  const ruleCount = answers.reduce((sum, a) => sum + a.rules.length, 0) / answers.length;
  const packed = new Map(answers.map((a) => [a, { rules: PackedRules.of(a.rules), raw: null }]));
  const contenders: Array<{ label: string; digest: Digest }> = [
    { label: "this build", digest: rulesDigestOf },
    {
      label: "this build, packed",
      digest: (a) => rulesDigestOf(packed.get(a) as { rules: PackedRules; raw: null }),
    },
  ];
  if (baseline !== undefined) {
    const loaded = baselineModule<{ rulesDigestOf: Digest }>(
      baseline,
      "dist/crawler/store/rules-digest.js",
    );
    contenders.unshift({ label: `baseline (${baseline})`, digest: loaded.rulesDigestOf });
  }
  // Warm-up: every contender's code optimised before any round counts.
  for (const c of contenders) usPerCall(c.digest, answers, 3);
  console.log(
    `${answers.length} answers with rules (of ${servers} servers), ${ruleCount.toFixed(0)} rules each on average`,
  );
  printAlternatedRounds(
    contenders,
    rounds,
    (c) => `${c.label} ${usPerCall(c.digest, answers, 20).toFixed(2)} us`,
    "answer",
  );
}

main();
