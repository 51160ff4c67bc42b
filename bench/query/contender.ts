/**
 * Child process: one contender queries every server of a fleet file at a fixed concurrency, then
 * checks its answers against the specs (after the clock stops) and reports.
 * node dist-bench/bench/query/contender.js --lib gsindex --fleet FILE --concurrency C --send-wait-ms W --sends N
 *   [--passes P] [--answers keep|count]
 * --passes P: P more passes over the fleet after the first, in the same process. The first pass is
 * the cold figure (a one-shot script); the later ones the warm one (a long-lived worker, as gsindex
 * runs). Every contender and the floor get the same passes.
 * --answers count: each answer is counted (failed or not) as it arrives and dropped, and nothing is
 * checked against the specs: what the library costs with nothing holding its answers. Holding every
 * pass's answers (keep, the default) costs the process garbage-collector time that grows with them: in
 * the crawl part's bare-library passes of 20,000 servers, 13-32 % more CPU per server warm
 * (docs/BENCHMARKS-history.md, 2026-12-07, "the bare library's held answers").
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { processCost, reportResult } from "../lib/child";
import { startSectionProfile, type SectionProfiler } from "../lib/cpu-profile";
import { score, type Answer, type Correctness } from "./answer";
import { makeContender, type ContenderId } from "./contenders";
import { countDatagrams } from "./datagram-count";

/** One pass over the whole fleet: every server queried once, at the process's concurrency. */
export interface PassResult {
  wallMs: number;
  serversPerSecond: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Servers queried in the pass (or passes, for the warm aggregate). */
  servers: number;
  /** Servers whose answer carried no error (every part answered). */
  answered: number;
  /** The answers checked against the specs; null when the pass kept none (`--answers count`). */
  correctness: Correctness | null;
  /** UDP datagrams the process sent and received per server (node:dgram counted the same way for every contender). */
  datagramsSentPerServer: number;
  datagramsReceivedPerServer: number;
}

export interface ContenderResult {
  id: ContenderId;
  label: string;
  servers: number;
  concurrency: number;
  /** The first pass of the process: module code and the JIT cold, as a one-shot script sees it. */
  cold: PassResult;
  /**
   * The passes after it taken together (CPU and wall summed, correctness of the worst pass): the steady
   * state of a long-lived worker. Null when the process ran one pass.
   */
  warm: PassResult | null;
  /** Every pass, the cold one first. */
  passes: PassResult[];
  /** Peak resident set size over the process's life. */
  peakRssBytes: number;
}

/** Passes 1.. summed: CPU per server and servers/s of the lot, correctness of the worst pass. */
function aggregate(passes: PassResult[]): PassResult | null {
  if (passes.length === 0) return null;
  const sum = (f: (p: PassResult) => number): number => passes.reduce((a, p) => a + f(p), 0);
  const servers = sum((p) => p.servers);
  const wallMs = sum((p) => p.wallMs);
  const worst = passes.reduce((a, b) =>
    (b.correctness?.allCorrect ?? b.answered) < (a.correctness?.allCorrect ?? a.answered) ? b : a,
  );
  return {
    wallMs,
    serversPerSecond: (servers * 1000) / wallMs,
    cpuUserMs: sum((p) => p.cpuUserMs),
    cpuSystemMs: sum((p) => p.cpuSystemMs),
    servers,
    answered: worst.answered,
    correctness: worst.correctness,
    datagramsSentPerServer: sum((p) => p.datagramsSentPerServer * p.servers) / servers,
    datagramsReceivedPerServer: sum((p) => p.datagramsReceivedPerServer * p.servers) / servers,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      lib: { type: "string" },
      fleet: { type: "string" },
      concurrency: { type: "string" },
      "send-wait-ms": { type: "string" },
      sends: { type: "string" },
      limit: { type: "string" },
      /** Warm passes after the first (cold) one, in the same process. */
      passes: { type: "string" },
      "profile-out": { type: "string" },
      /** Profile the cold pass or the warm ones. @defaultValue warm when there are warm passes */
      "profile-phase": { type: "string" },
      answers: { type: "string" },
    },
  });
  const keepAnswers = (values.answers ?? "keep") === "keep";
  if (!keepAnswers && values.answers !== "count")
    throw new Error(`--answers is keep or count, got ${values.answers}`);
  const fleet = JSON.parse(readFileSync(values.fleet ?? "", "utf8")) as {
    servers: SimServerSpec[];
  };
  const specs =
    values.limit === undefined ? fleet.servers : fleet.servers.slice(0, Number(values.limit));
  const concurrency = Number(values.concurrency ?? 100);
  const warmPasses = Number(values.passes ?? 0);
  const profilePhase = values["profile-phase"] ?? (warmPasses > 0 ? "warm" : "cold");
  const counts = countDatagrams();
  const contender = makeContender(values.lib as ContenderId, {
    sendWaitMs: Number(values["send-wait-ms"] ?? 500),
    sends: Number(values.sends ?? 2),
  });

  const runPass = async (): Promise<{
    raws: unknown[] | null;
    pass: Omit<PassResult, "correctness" | "answered">;
    failed: number;
  }> => {
    const raws: unknown[] | null = keepAnswers ? new Array(specs.length) : null;
    let failed = 0;
    const sentBefore = counts.sent;
    const receivedBefore = counts.received;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < specs.length) {
        const n = next++;
        const spec = specs[n] as SimServerSpec;
        let raw: unknown;
        try {
          raw = await contender.query(spec.host, spec.queryPort);
        } catch (err) {
          raw = { error: err instanceof Error ? err.message : String(err) } satisfies Answer;
        }
        if (raws !== null) raws[n] = raw;
        else if (contender.failed(raw)) failed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
    const wallMs = performance.now() - started;
    const cost = processCost(cpuBefore);
    return {
      raws,
      failed,
      pass: {
        wallMs,
        serversPerSecond: (specs.length * 1000) / wallMs,
        cpuUserMs: cost.cpuUserMs,
        cpuSystemMs: cost.cpuSystemMs,
        servers: specs.length,
        datagramsSentPerServer: (counts.sent - sentBefore) / specs.length,
        datagramsReceivedPerServer: (counts.received - receivedBefore) / specs.length,
      },
    };
  };

  const measured: Array<Awaited<ReturnType<typeof runPass>>> = [];
  let profiler: SectionProfiler | null = null;
  for (let n = 0; n <= warmPasses; n++) {
    const phase = n === 0 ? "cold" : "warm";
    if (profiler === null && phase === profilePhase)
      profiler = await startSectionProfile(values["profile-out"]);
    measured.push(await runPass());
    if (profiler !== null && (phase === "cold" || n === warmPasses)) {
      await profiler.stop();
      profiler = null;
    }
  }
  await contender.close();
  // Checked after the last pass, so that no pass (nor the profile) holds the bench's own checking.
  const passes: PassResult[] = measured.map(({ raws, pass, failed }) => {
    if (raws === null) return { ...pass, answered: pass.servers - failed, correctness: null };
    const correctness = score(
      specs,
      raws.map((raw): Answer => contender.answer(raw)),
    );
    return { ...pass, answered: pass.servers - correctness.failed, correctness };
  });

  const result: ContenderResult = {
    id: contender.id,
    label: contender.label,
    servers: specs.length,
    concurrency,
    cold: passes[0] as PassResult,
    warm: aggregate(passes.slice(1)),
    passes,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  reportResult(result);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
