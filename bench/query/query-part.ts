/**
 * Part 1, query throughput: one simulated fleet (challenges, split and compressed replies), queried
 * for INFO + PLAYER + RULES by gsindex, GameDig and @fabricio-191/valve-server-query at the same
 * concurrency, each in its own process. Rounds alternate the contenders; the best round of each counts
 * (a shared, noisy machine only ever slows a run down).
 */
import path from "node:path";
import type { BenchOptions } from "../lib/args";
import { benchScript, RUN_OCTET, runChild } from "../lib/child";
import { profileMarkdown, summariseProfile, type ProfileSummary } from "../lib/profile";
import { mib, num, ratio, seconds, table, type PartResult, type Verdict } from "../lib/report";
import { ANSWERING_MIX, procCpuMs, startSimulator } from "../lib/simulator";
import type { ContenderResult } from "./contender";
import type { ContenderId } from "./contenders";

const CONTENDERS: ContenderId[] = ["gamedig", "fabricio", "gsindex"];
const TIMEOUT_MS = 1000;
const ROUNDS = 2;
const HOST = `127.77.${RUN_OCTET}.1`;
const BASE_PORT = 20000;

interface Run extends ContenderResult {
  simulatorCpuMs: number;
}

/** What limits gsindex's figure, from its own numbers and its profile. */
function limits(
  ours: Run | undefined,
  gamedig: Run | undefined,
  profile: ProfileSummary | undefined,
  concurrency: number,
): string {
  if (!ours || !gamedig) return "";
  const share = (origin: string): number =>
    (profile?.byOrigin.find((o) => o.origin === origin)?.share ?? 0) * 100;
  // The UDP send binding shows as native `send` (inspector profile) or node:dgram's doSend (--cpu-prof).
  const sendShare =
    (profile?.top
      .filter(
        (t) =>
          (t.fn === "send" && t.where === "") ||
          (t.fn === "doSend" && t.where.startsWith("node:dgram")),
      )
      .reduce((sum, t) => sum + t.share, 0) ?? 0) * 100;
  const oursCpu = (ours.cpuUserMs + ours.cpuSystemMs) / ours.servers;
  const theirCpu = (gamedig.cpuUserMs + gamedig.cpuSystemMs) / gamedig.servers;
  const oursLatency = (concurrency * 1000) / ours.serversPerSecond;
  const theirLatency = (concurrency * 1000) / gamedig.serversPerSecond;
  return [
    `What limits it: at a fixed concurrency, servers/s = concurrency / time each server is in flight (Little's law): ${num(oursLatency, 1)} ms for gsindex, ${num(theirLatency, 1)} ms for GameDig. ` +
      `That time is the client's sequential round trips (INFO, PLAYER, RULES and their challenges: ${ours.datagramsPerServer === null ? "n/a" : num(ours.datagramsPerServer, 2)} requests per server for gsindex) plus waiting for a CPU: ` +
      `gsindex needs ${num(oursCpu, 3)} CPU ms per server, GameDig ${num(theirCpu, 3)} (${ratio(theirCpu, oursCpu)} as much), and on 2 shared cores with the simulator and other work running, CPU queueing is most of the time in flight. ` +
      `Of gsindex's CPU, the profile puts ${num(sendShare, 1)} % in the UDP send call (on loopback the sending syscall also delivers the datagram to the receiver), ${num(share("garbage collector"), 1)} % in garbage collection, ${num(share("seek-bzip"), 1)} % in bzip2 decompression and ${num(share("gsindex protocol/valve") + share("gsindex protocol/transport") + share("gsindex protocol/wire"), 1)} % in gsindex's own protocol code: ` +
      "the per-datagram cost every client pays is a large part of what remains; round trips are already down to what the servers require (see below), and on loopback a round trip is mostly CPU queueing.",
  ].join("");
}

export async function runQueryPart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
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
  const concurrency = options.queryConcurrency;
  const contenderArgs = (lib: ContenderId): string[] => [
    "--lib",
    lib,
    "--fleet",
    fleetFile,
    "--concurrency",
    String(concurrency),
    "--timeout-ms",
    String(TIMEOUT_MS),
  ];
  const runOne = async (lib: ContenderId, profileOut?: string): Promise<Run> => {
    const simBefore = procCpuMs(simPid);
    const args = contenderArgs(lib);
    if (profileOut !== undefined) args.push("--profile-out", profileOut);
    const { result } = await runChild<ContenderResult>(benchScript("query/contender"), args, {
      raiseFileLimit: true,
    });
    return { ...result, simulatorCpuMs: procCpuMs(simPid) - simBefore };
  };
  const runs = new Map<ContenderId, Run[]>();
  const profiles = new Map<ContenderId, ProfileSummary>();
  try {
    // Warm-up: the simulator encodes, splits and compresses each reply on first use.
    log("query: warm-up pass");
    await runOne("gsindex");
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse();
      for (const lib of order) {
        const run = await runOne(lib);
        log(
          `query: round ${round + 1} ${lib}: ${num(run.serversPerSecond)} servers/s, ${run.correctness.allCorrect}/${run.servers} correct`,
        );
        runs.set(lib, [...(runs.get(lib) ?? []), run]);
      }
    }
    if (!options.noProfile) {
      for (const lib of ["gsindex", "gamedig"] as ContenderId[]) {
        const file = path.join(outDir, `query-${lib}.cpuprofile`);
        await runOne(lib, file);
        profiles.set(lib, summariseProfile(file));
      }
    }
  } finally {
    await sim.stop();
  }

  const best = new Map<ContenderId, Run>();
  for (const [lib, list] of runs)
    best.set(
      lib,
      list.reduce((a, b) => (b.serversPerSecond > a.serversPerSecond ? b : a)),
    );
  const ours = best.get("gsindex");
  const gamedig = best.get("gamedig");
  const peers = [...best.values()].filter((r) => r.id !== "gsindex");
  const bestPeer = peers.reduce<Run | undefined>(
    (a, b) => (a === undefined || b.serversPerSecond > a.serversPerSecond ? b : a),
    undefined,
  );
  const rows = [...best.values()].map((r) => {
    const cpuMs = r.cpuUserMs + r.cpuSystemMs;
    const c = r.correctness;
    return [
      r.label,
      `**${num(r.serversPerSecond)}**`,
      seconds(r.wallMs),
      `${c.allCorrect} / ${r.servers} (info ${c.infoCorrect}, players ${c.playersCorrect}, rules ${c.rulesCorrect})`,
      `${seconds(cpuMs)} (${num(cpuMs / r.servers, 3)} ms/server)`,
      `${num((concurrency * 1000) / r.serversPerSecond, 1)} ms`,
      r.datagramsPerServer === null ? "not counted" : num(r.datagramsPerServer, 2),
      mib(r.peakRssBytes),
      seconds(r.simulatorCpuMs),
      bestPeer ? ratio(r.serversPerSecond, bestPeer.serversPerSecond) : "n/a",
      gamedig ? ratio(r.serversPerSecond, gamedig.serversPerSecond) : "n/a",
    ];
  });
  const allRounds = [...runs.values()]
    .flat()
    .map((r) => [
      r.label,
      num(r.serversPerSecond),
      `${r.correctness.allCorrect}/${r.servers}`,
      seconds(r.cpuUserMs + r.cpuSystemMs),
    ]);
  const factor = ours && gamedig ? ours.serversPerSecond / gamedig.serversPerSecond : NaN;
  const verdicts: Verdict[] = [
    {
      what: "query throughput vs GameDig (same fleet, same concurrency)",
      target: ">= 3x GameDig servers/s",
      measured: Number.isFinite(factor)
        ? `${num(factor, 2)}x (${num(ours?.serversPerSecond ?? 0)} vs ${num(gamedig?.serversPerSecond ?? 0)} servers/s)`
        : "n/a",
      met: Number.isFinite(factor) ? factor >= 3 : null,
      gap: `${num(factor, 2)}x of 3x: ${num((3 / factor - 1) * 100, 0)} % short`,
    },
  ];
  const failures = [...best.values()]
    .filter((r) => r.correctness.examples.length > 0)
    .map(
      (r) =>
        `- ${r.label}: ${r.correctness.examples.map((e) => `\`${e.replace(/`/g, "'")}\``).join("; ")}`,
    );

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

  const markdown = [
    `Fleet: ${num(sims.length)} simulated servers on ${HOST} (one \`gsindex simulate\` process; \`makeFleet\` seed 1 with the failure modes off: no silent, lossy, slow, malformed, duplicating or rules-less servers, so every contender can answer everything). ` +
      `${num(challenged)} servers demand challenges (INFO and/or PLAYER+RULES), ${num(bigRules)} answer RULES in split replies (${num(goldsrcSplit)} in the GoldSrc layout, ${num(compressed)} bzip2-compressed), ${num(reordered)} reorder their fragments.`,
    `Each contender runs in its own process and asks every server for INFO, PLAYER and RULES with ${concurrency} servers in flight, timeout ${TIMEOUT_MS} ms, one re-send. ` +
      `Answers are checked field by field against the fleet spec after the clock stops. ${ROUNDS} rounds in alternating order after a warm-up pass; the best round of each contender is shown (all rounds below).`,
    "",
    table(
      [
        "contender",
        "servers/s",
        "wall",
        "answers correct",
        "CPU (user+sys)",
        "time per server (Little)",
        "requests sent per server",
        "peak RSS",
        "simulator CPU",
        "vs best peer",
        "vs GameDig",
      ],
      rows,
    ),
    "",
    `Target: gsindex >= 3x GameDig's servers/s at equal concurrency: **${verdicts[0]?.measured}**, ${verdicts[0]?.met ? "met" : "missed"}.`,
    "",
    limits(ours, gamedig, profiles.get("gsindex"), concurrency),
    "",
    failures.length > 0
      ? `Examples of answers that did not match the spec:\n\n${failures.join("\n")}\n`
      : "Every answer of every contender matched the spec.\n",
    "All rounds:",
    "",
    table(["contender", "servers/s", "correct", "CPU"], allRounds),
    "",
    "Round trips: gsindex asks PLAYER and RULES with the challenge INFO already got (a server answers a stale one with a fresh challenge, as it answers -1, so this never costs a round), which is why it sends " +
      `${ours?.datagramsPerServer === null || ours === undefined ? "fewer" : num(ours.datagramsPerServer ?? 0, 2)} requests per server here; a client that asks -1 first for each part sends about 5 on this fleet.`,
    "",
    "@fabricio-191/valve-server-query was chosen as the second peer: of the npm A2S libraries (it, steam-server-query, source-server-query) it is the only one that handles the INFO challenge, both split layouts and bzip2. Its documented use connects first (`Server(...)`, which asks INFO to learn the challenge mode) and then asks INFO, PLAYER and RULES, one socket per server: that is what it costs, so it is measured that way.",
    ...[...profiles].map(
      ([lib, summary]) =>
        `\n${profileMarkdown(summary, `the ${lib} contender (a separate profiled run of the same fleet, the measured section only)`)}`,
    ),
  ].join("\n");
  return {
    id: "query",
    title: "Query throughput (gsindex vs GameDig vs @fabricio-191/valve-server-query)",
    markdown,
    commands: [
      `npm run bench -- --only query --query-servers ${options.queryServers} --concurrency ${concurrency}`,
    ],
    verdicts,
    data: {
      best: Object.fromEntries(best),
      runs: Object.fromEntries(runs),
      profiles: Object.fromEntries(profiles),
    },
    wallMs: Date.now() - started,
  };
}
