/**
 * Part 1, query throughput: one simulated fleet (challenges, split and compressed replies), queried
 * for INFO + PLAYER + RULES by gsindex, GameDig and @fabricio-191/valve-server-query with the same
 * retry policy (contenders.ts maps it onto each library's options) at each concurrency, each in its own
 * process, beside a bare node:dgram loop (echo-floor.ts) that gives the floor CPU per datagram.
 * Rounds run every contender once, in alternating order; figures are medians over the rounds with
 * their spread (a shared, noisy machine moves wall time far more than CPU per server).
 * Each process makes 1 + `queryPasses` passes over the fleet: the first is the cold figure (what a
 * one-shot script costs), the rest together the warm one (a long-lived worker, which gsindex is).
 * Both are reported and judged, each against the same phase of the others and of the floor.
 */
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import type { BenchOptions } from "../lib/args";
import { benchScript, RUN_OCTET, runChild } from "../lib/child";
import { profileMarkdown, summariseProfile, type ProfileSummary } from "../lib/profile";
import { mib, num, seconds, table, type PartResult, type Verdict } from "../lib/report";
import { ANSWERING_MIX, procCpuMs, startSimulator } from "../lib/simulator";
import type { Correctness } from "./answer";
import type { ContenderResult, PassResult } from "./contender";
import type { ContenderId } from "./contenders";
import type { FloorPass, FloorResult } from "./echo-floor";

type Phase = "cold" | "warm";

const CONTENDERS: ContenderId[] = ["gamedig", "fabricio", "gsindex"];
/** The retry policy every contender gets: each request sent up to SENDS times, SEND_WAIT_MS apart. */
const SEND_WAIT_MS = 500;
const SENDS = 2;
const ROUNDS = 3;
const FLOOR_ROUND_TRIPS = 40_000;
const HOST = `127.77.${RUN_OCTET}.1`;
const BASE_PORT = 20000;

interface Run extends ContenderResult {
  simulatorCpuMs: number;
  round: number;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] ?? NaN, max: sorted[sorted.length - 1] ?? NaN };
}

function spreadText(s: Spread, digits: number): string {
  return `${num(s.median, digits)} (${num(s.min, digits)}-${num(s.max, digits)})`;
}

/** A run's figures in one phase (the cold pass, or the warm passes together). */
function phaseOf(r: Run, phase: Phase): PassResult {
  return (phase === "warm" ? r.warm : r.cold) ?? r.cold;
}

function floorOf(f: FloorResult, phase: Phase): FloorPass {
  return (phase === "warm" ? f.warm : f.cold) ?? f.cold;
}

const cpuPerServer = (p: PassResult): number => (p.cpuUserMs + p.cpuSystemMs) / p.servers;

/** A pass's answers as checked: this part's contenders keep every answer (contender.ts `--answers keep`). */
function checked(p: PassResult): Correctness {
  if (p.correctness === null)
    throw new Error("the query part's contenders must keep their answers");
  return p.correctness;
}

function uptimeText(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`;
  }
}

interface Summary {
  lib: ContenderId;
  label: string;
  runs: Run[];
  rate: Spread;
  cpu: Spread;
  sent: number;
  received: number;
}

function summarise(lib: ContenderId, runs: Run[], phase: Phase): Summary {
  const passes = runs.map((r) => phaseOf(r, phase));
  return {
    lib,
    label: runs[0]?.label ?? lib,
    runs,
    rate: spread(passes.map((p) => p.serversPerSecond)),
    cpu: spread(passes.map(cpuPerServer)),
    sent: spread(passes.map((p) => p.datagramsSentPerServer)).median,
    received: spread(passes.map((p) => p.datagramsReceivedPerServer)).median,
  };
}

const PHASE_TEXT: Record<Phase, string> = {
  cold: "cold (the first pass of each process)",
  warm: "warm (the passes after it, same process)",
};

export async function runQueryPart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const uptimeBefore = uptimeText();
  const fleetFile = path.join(outDir, "query-fleet.json");
  log(`query: starting ${options.queryServers} simulated servers on ${HOST}`);
  const sim = await startSimulator({
    servers: options.queryServers,
    hosts: [HOST],
    basePort: BASE_PORT,
    mix: ANSWERING_MIX,
    jsonOut: fleetFile,
  });
  const simPid = sim.child.pid;
  const concurrencies = options.queryConcurrency;
  const warmPasses = options.queryPasses;
  const phases: Phase[] = warmPasses > 0 ? ["cold", "warm"] : ["cold"];
  const runOne = async (
    lib: ContenderId,
    concurrency: number,
    round: number,
    profileOut?: string,
  ): Promise<Run> => {
    const simBefore = procCpuMs(simPid);
    const args = [
      "--lib",
      lib,
      "--fleet",
      fleetFile,
      "--concurrency",
      String(concurrency),
      "--send-wait-ms",
      String(SEND_WAIT_MS),
      "--sends",
      String(SENDS),
      "--passes",
      String(warmPasses),
    ];
    if (profileOut !== undefined) args.push("--profile-out", profileOut);
    const { result } = await runChild<ContenderResult>(benchScript("query/contender"), args, {
      raiseFileLimit: true,
    });
    return { ...result, simulatorCpuMs: procCpuMs(simPid) - simBefore, round };
  };
  const runFloor = async (concurrency: number): Promise<FloorResult> => {
    const { result } = await runChild<FloorResult>(benchScript("query/echo-floor"), [
      "--fleet",
      fleetFile,
      "--concurrency",
      String(concurrency),
      "--round-trips",
      String(FLOOR_ROUND_TRIPS),
      "--passes",
      String(warmPasses),
    ]);
    return result;
  };
  const runs = new Map<number, Map<ContenderId, Run[]>>();
  const floors = new Map<number, FloorResult[]>();
  const profiles = new Map<ContenderId, ProfileSummary>();
  try {
    // Warm-up of the simulator (it encodes, splits and compresses each reply on first use), not of the
    // contenders: each of them starts cold in its own process.
    log("query: simulator warm-up pass");
    await runOne("gsindex", concurrencies[0] ?? 100, 0);
    for (const concurrency of concurrencies) {
      const byLib = new Map<ContenderId, Run[]>();
      runs.set(concurrency, byLib);
      floors.set(concurrency, []);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse();
        for (const lib of order) {
          const run = await runOne(lib, concurrency, round + 1);
          const passText = (p: PassResult): string =>
            `${num(p.serversPerSecond)} servers/s, ${num(cpuPerServer(p), 3)} CPU ms/server, ${checked(p).allCorrect}/${p.servers / (p === run.cold ? 1 : warmPasses)} correct`;
          log(
            `query: c=${concurrency} round ${round + 1} ${lib}: cold ${passText(run.cold)}${run.warm ? `; warm ${passText(run.warm)}` : ""}`,
          );
          byLib.set(lib, [...(byLib.get(lib) ?? []), run]);
        }
        const floor = await runFloor(concurrency);
        log(
          `query: c=${concurrency} round ${round + 1} floor: cold ${num(floor.cold.cpuMsPerDatagram * 1000, 2)}${floor.warm ? `, warm ${num(floor.warm.cpuMsPerDatagram * 1000, 2)}` : ""} CPU us/datagram`,
        );
        floors.get(concurrency)?.push(floor);
      }
    }
    if (!options.noProfile) {
      for (const lib of ["gsindex", "gamedig"] as ContenderId[]) {
        const file = path.join(outDir, `query-${lib}.cpuprofile`);
        await runOne(lib, concurrencies[0] ?? 100, 0, file);
        profiles.set(lib, summariseProfile(file));
      }
    }
  } finally {
    await sim.stop();
  }
  const uptimeAfter = uptimeText();

  const verdicts: Verdict[] = [];
  const sections: string[] = [];
  const data: Record<string, unknown> = {};
  for (const concurrency of concurrencies) {
    const byLib = runs.get(concurrency) ?? new Map<ContenderId, Run[]>();
    const phaseData: Record<string, unknown> = {};
    for (const phase of phases) {
      const summaries = CONTENDERS.filter((lib) => byLib.has(lib)).map((lib) =>
        summarise(lib, byLib.get(lib) ?? [], phase),
      );
      const ours = summaries.find((s) => s.lib === "gsindex");
      const gamedig = summaries.find((s) => s.lib === "gamedig");
      const floorPasses = (floors.get(concurrency) ?? []).map((f) => floorOf(f, phase));
      const floor = spread(floorPasses.map((f) => f.cpuMsPerDatagram));
      // Ratios per round (the two ran minutes apart at most), then their spread.
      const roundRatios = (f: (ours: PassResult, theirs: PassResult) => number): Spread =>
        spread(
          (ours?.runs ?? []).flatMap((o) => {
            const g = gamedig?.runs.find((r) => r.round === o.round);
            return g ? [f(phaseOf(o, phase), phaseOf(g, phase))] : [];
          }),
        );
      const speed = roundRatios((o, g) => o.serversPerSecond / g.serversPerSecond);
      const cpu = roundRatios((o, g) => cpuPerServer(o) / cpuPerServer(g));
      const rows = summaries.map((s) => {
        const worst = s.runs
          .map((r) => phaseOf(r, phase))
          .reduce((a, b) => (checked(b).allCorrect < checked(a).allCorrect ? b : a));
        const c = checked(worst);
        const datagrams = s.sent + s.received;
        const passesPerRun = phase === "warm" ? warmPasses : 1;
        return [
          s.label,
          `**${spreadText(s.rate, 0)}**`,
          `**${spreadText(s.cpu, 3)}**`,
          `${c.allCorrect} / ${worst.servers / passesPerRun} (info ${c.infoCorrect}, players ${c.playersCorrect}, rules ${c.rulesCorrect})`,
          `${num(s.sent, 2)} / ${num(s.received, 2)}`,
          `${num(s.cpu.median / (datagrams * floor.median), 2)}x`,
          mib(Math.max(...s.runs.map((r) => r.peakRssBytes))),
          seconds(spread(s.runs.map((r) => r.simulatorCpuMs / (1 + warmPasses))).median),
        ];
      });
      const floorRow = [
        "bare node:dgram loop (the floor)",
        `${num(spread(floorPasses.map((f) => ((f.sent + f.received) / 2 / f.wallMs) * 1000)).median)} round trips/s`,
        `${spreadText({ median: floor.median * 1000, min: floor.min * 1000, max: floor.max * 1000 }, 2)} us per datagram`,
        "",
        "1 / 1",
        "1x",
        mib(Math.max(...(floors.get(concurrency) ?? []).map((f) => f.peakRssBytes))),
        "",
      ];
      const speedMet = speed.median >= 3;
      const cpuMet = cpu.median <= 1 / 3;
      const tag = `${phase}, ${phase === "warm" ? (warmPasses === 1 ? "pass 2 of each process" : `passes 2-${1 + warmPasses} of each process`) : "first pass of each process"}`;
      verdicts.push(
        {
          what: `query throughput vs GameDig, matched retries, concurrency ${concurrency}, ${tag}`,
          target: ">= 3x GameDig servers/s",
          measured: `${num(speed.median, 2)}x (rounds ${num(speed.min, 2)}-${num(speed.max, 2)}x)`,
          met: Number.isFinite(speed.median) ? speedMet : null,
          gap: `${num((3 / speed.median - 1) * 100, 0)} % short`,
        },
        {
          what: `query client CPU per server vs GameDig, concurrency ${concurrency}, ${tag}`,
          target: "<= 1/3 of GameDig CPU per server",
          measured: `${num(cpu.median, 3)} of it (1/${num(1 / cpu.median, 2)}; rounds ${num(cpu.min, 3)}-${num(cpu.max, 3)})`,
          met: Number.isFinite(cpu.median) ? cpuMet : null,
          gap: `${num(cpu.median * 3, 2)}x the target`,
        },
      );
      const floorMultiple = ours
        ? ours.cpu.median / ((ours.sent + ours.received) * floor.median)
        : NaN;
      sections.push(
        [
          `### Concurrency ${concurrency}, ${PHASE_TEXT[phase]}`,
          "",
          table(
            [
              "contender",
              "servers/s, median (min-max)",
              "client CPU ms per server, median (min-max)",
              phase === "warm" ? "answers correct (worst pass)" : "answers correct (worst round)",
              "datagrams sent / received per server",
              "CPU per server vs (datagrams x floor)",
              "peak RSS (the process, holding every pass's answers)",
              "simulator CPU per pass",
            ],
            [...rows, floorRow],
          ),
          "",
          `${phase === "warm" ? "Warm" : "Cold"}: gsindex vs GameDig, per round: **${num(speed.median, 2)}x** the servers/s (${num(speed.min, 2)}-${num(speed.max, 2)}x; target >= 3x, ${speedMet ? "met" : "missed"}) at **${num(cpu.median, 3)}** of the CPU per server (1/${num(1 / cpu.median, 2)}; ${num(cpu.min, 3)}-${num(cpu.max, 3)}; target <= 1/3, ${cpuMet ? "met" : "missed"}). ` +
            `Floor: a bare node:dgram loop costs ${num(floor.median * 1000, 2)} us of CPU per datagram sent or received; gsindex spends ${num(ours?.cpu.median ?? NaN, 3)} ms per server for ${num((ours?.sent ?? NaN) + (ours?.received ?? NaN), 2)} datagrams, **${num(floorMultiple, 2)}x** the floor.`,
        ].join("\n"),
      );
      phaseData[phase] = {
        summaries: summaries.map(({ runs: r, ...rest }) => ({ ...rest, runs: r })),
        floors: floors.get(concurrency),
        speed,
        cpu,
        floorMultiple,
      };
    }
    data[String(concurrency)] = phaseData;
  }

  const sims = sim.specs;
  const challenged = sims.filter(
    (s) => s.behaviour?.challenge !== undefined && s.behaviour.challenge !== "none",
  ).length;
  const bigRules = sims.filter((s) => s.state.keywords.includes("bigrules")).length;
  const compressed = sims.filter((s) => s.behaviour?.compress === true).length;
  const goldsrcSplit = sims.filter(
    (s) => s.behaviour?.splitFormat === "goldsrc" && s.state.keywords.includes("bigrules"),
  ).length;
  const reordered = sims.filter((s) => s.behaviour?.reorder === true).length;
  const failures = [...runs.values()]
    .flatMap((m) => [...m.values()].flat())
    .flatMap((r) =>
      r.passes.map((p, n) => ({ r, p, n })).filter(({ p }) => checked(p).examples.length > 0),
    )
    .slice(0, 6)
    .map(
      ({ r, p, n }) =>
        `- ${r.label} (c=${r.concurrency}, round ${r.round}, pass ${n + 1}): ${checked(p)
          .examples.map((e) => `\`${e.replace(/`/g, "'")}\``)
          .join("; ")}`,
    );
  const allRounds = [...runs.entries()].flatMap(([c, m]) =>
    [...m.values()]
      .flat()
      .sort((a, b) => a.round - b.round)
      .flatMap((r) =>
        r.passes.map((p, n) => [
          String(c),
          String(r.round),
          `${n + 1}${n === 0 ? " (cold)" : ""}`,
          r.label,
          num(p.serversPerSecond),
          num(cpuPerServer(p), 3),
          `${checked(p).allCorrect}/${p.servers}`,
        ]),
      ),
  );

  const markdown = [
    `Fleet: ${num(sims.length)} simulated servers on ${HOST} (one \`gsindex simulate\` process; \`makeFleet\` seed 1 with the failure modes off: no silent, lossy, slow, malformed, duplicating or rules-less servers, so every contender can answer everything). ` +
      `${num(challenged)} servers demand challenges (INFO and/or PLAYER+RULES), ${num(bigRules)} answer RULES in split replies (${num(goldsrcSplit)} in the GoldSrc layout, ${num(compressed)} bzip2-compressed), ${num(reordered)} reorder their fragments.`,
    "",
    `Matched retries: every contender sends each request up to ${SENDS} times, ${SEND_WAIT_MS} ms apart. In each library's terms (bench/query/contenders.ts has the reading of their code): gsindex \`timeoutMs: ${SENDS * SEND_WAIT_MS}, retries: ${SENDS - 1}\` (per part; PLAYER and RULES give their first request half of that to keep time for the \`W\` fallback); ` +
      `GameDig \`socketTimeout: ${SEND_WAIT_MS}, maxRetries: ${SENDS}, attemptTimeout: ${3 * SENDS * SEND_WAIT_MS}\` (GameDig never re-sends a request: \`maxRetries\` counts whole attempts, 1 = one attempt, and a second attempt re-runs the query from INFO); ` +
      `valve-server-query \`timeout: ${2 * SEND_WAIT_MS}\` (it re-sends once at timeout / 2).`,
    "",
    `Each contender runs in its own process and asks every server for INFO, PLAYER and RULES with C servers in flight. Answers are checked field by field against the fleet spec after the clock stops. ` +
      `${ROUNDS} rounds per concurrency after a pass that warms the simulator up, the contenders in alternating order, then the floor loop; figures are medians with the min-max over the rounds, and the gsindex/GameDig ratios are taken per round (the two ran within seconds of each other). ` +
      `Passes: each process (every contender and the floor alike) makes ${1 + warmPasses} pass${warmPasses > 0 ? "es" : ""} over the fleet (\`--passes ${warmPasses}\`): the first is the **cold** figure, what a one-shot script costs with the JIT and the libraries' code cold; ${warmPasses > 0 ? `the ${warmPasses} after it, summed, are the **warm** figure, the steady state of a long-lived worker (gsindex runs in one for months). Both are judged against the targets, each against the same phase of GameDig and of the floor.` : "there is no warm figure in this run."} ` +
      `Datagrams are counted on node:dgram's socket for every contender alike. The floor: bench/query/echo-floor.ts, one socket sending A2S_INFO to the same simulator with C requests in flight, the next sent as each reply arrives (${num(FLOOR_ROUND_TRIPS)} round trips); its CPU per datagram times a contender's datagrams per server is the least any client could spend.`,
    "",
    `Load: before the part \`${uptimeBefore}\`; after \`${uptimeAfter}\` (${os.cpus().length} cores). Client CPU per server holds under load far better than servers/s, which on a saturated machine is mostly waiting for a core.`,
    "",
    ...sections.flatMap((s) => [s, ""]),
    failures.length > 0
      ? `Examples of answers that did not match the spec:\n\n${failures.join("\n")}\n`
      : "Every answer of every contender matched the spec.\n",
    "All rounds, every pass:",
    "",
    table(
      ["concurrency", "round", "pass", "contender", "servers/s", "CPU ms/server", "correct"],
      allRounds,
    ),
    "",
    "Round trips: gsindex asks PLAYER and RULES with the challenge INFO already got (a server answers a stale one with a fresh challenge, as it answers -1, so this never costs a round), which is why it sends fewer requests per server than the peers.",
    "",
    "@fabricio-191/valve-server-query was chosen as the second peer: of the npm A2S libraries (it, steam-server-query, source-server-query) it is the only one that handles the INFO challenge, both split layouts and bzip2. Its documented use connects first (`Server(...)`, which asks INFO to learn the challenge mode) and then asks INFO, PLAYER and RULES, one socket per server: that is what it costs, so it is measured that way.",
    ...[...profiles].map(
      ([lib, summary]) =>
        `\n${profileMarkdown(summary, `the ${lib} contender at concurrency ${concurrencies[0] ?? 100} (a separate profiled run of the same fleet, ${warmPasses > 0 ? `its ${warmPasses} warm passes only` : "the measured section only"})`)}`,
    ),
  ].join("\n");
  return {
    id: "query",
    title: "Query throughput (gsindex vs GameDig vs @fabricio-191/valve-server-query)",
    markdown,
    commands: [
      `npm run bench -- --only query --query-servers ${options.queryServers} --concurrency ${concurrencies.join(",")} --passes ${warmPasses}`,
    ],
    verdicts,
    data: {
      runs: Object.fromEntries([...runs].map(([c, m]) => [c, Object.fromEntries(m)])),
      summary: data,
      profiles: Object.fromEntries(profiles),
      uptimeBefore,
      uptimeAfter,
    },
    wallMs: Date.now() - started,
  };
}
