/**
 * Child process: decodes the captures of one kind in a tight loop on one core for --ms milliseconds.
 * node dist-bench/bench/decode/decode-child.js --lib gsindex|fabricio --kind info|players|rules --split no|yes --ms 2000 --dir CAPTURES
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { decodeDatagrams, decodeResponse } from "../../src/protocol";
import { reportResult } from "../lib/child";
import { startSectionProfile } from "../lib/cpu-profile";
import { packageDir } from "../lib/packages";
import { loadCaptures, type Capture, type CaptureKind } from "./captures";

export interface DecodeResult {
  lib: string;
  kind: CaptureKind;
  split: boolean;
  cases: number;
  /** Cases the decoder rejected (left out of the loop). */
  rejected: string[];
  decodes: number;
  ms: number;
  decodesPerSecond: number;
  /** Decodes per CPU second of this process: what one core does when it is not shared. */
  decodesPerCpuSecond: number;
  cpuMs: number;
  bytesPerSecond: number;
}

type Decode = (c: Capture) => unknown;

interface FabricioParsers {
  serverInfo(b: Buffer): unknown;
  playersInfo(b: Buffer, meta: { appID: number }, options: { enableWarns: boolean }): unknown;
  serverRules(b: Buffer): unknown;
}

function gsindexDecoder(split: boolean): Decode {
  if (split)
    return (c) => decodeDatagrams(c.datagrams, c.appId === undefined ? {} : { appId: c.appId });
  return (c) =>
    decodeResponse(c.datagrams[0] as Buffer, c.appId === undefined ? {} : { appId: c.appId });
}

function fabricioDecoder(kind: CaptureKind): Decode {
  const parsers = require(
    path.join(packageDir("@fabricio-191/valve-server-query"), "lib", "utils", "parsers.js"),
  ) as FabricioParsers;
  // Its parsers take the payload after the FF FF FF FF header.
  switch (kind) {
    case "info":
      return (c) => parsers.serverInfo((c.datagrams[0] as Buffer).subarray(4));
    case "players":
      return (c) =>
        parsers.playersInfo(
          (c.datagrams[0] as Buffer).subarray(4),
          { appID: c.appId ?? 0 },
          { enableWarns: false },
        );
    case "rules":
      return (c) => parsers.serverRules((c.datagrams[0] as Buffer).subarray(4));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      lib: { type: "string" },
      kind: { type: "string" },
      split: { type: "string" },
      ms: { type: "string" },
      dir: { type: "string" },
      "profile-out": { type: "string" },
    },
  });
  const kind = values.kind as CaptureKind;
  const split = values.split === "yes";
  const lib = values.lib ?? "gsindex";
  const decode = lib === "gsindex" ? gsindexDecoder(split) : fabricioDecoder(kind);
  const all = loadCaptures(values.dir ?? "").filter((c) => c.kind === kind && c.split === split);
  const rejected: string[] = [];
  const cases = all.filter((c) => {
    try {
      decode(c);
      return true;
    } catch {
      rejected.push(c.id);
      return false;
    }
  });
  const bytesPerPass = cases.reduce(
    (sum, c) => sum + c.datagrams.reduce((s, d) => s + d.length, 0),
    0,
  );
  const budgetMs = Number(values.ms ?? 2000);
  let sink = 0;
  // Warm-up so the figure is the optimised code's, not the interpreter's.
  for (let i = 0; i < 200; i++) for (const c of cases) sink += decode(c) === undefined ? 0 : 1;
  let passes = 0;
  const profiler = await startSectionProfile(values["profile-out"]);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const until = started + budgetMs;
  let now = started;
  while (now < until) {
    for (const c of cases) sink += decode(c) === undefined ? 0 : 1;
    passes++;
    now = performance.now();
  }
  const ms = now - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  await profiler.stop();
  const decodes = passes * cases.length;
  const result: DecodeResult = {
    lib,
    kind,
    split,
    cases: cases.length,
    rejected,
    decodes,
    ms,
    decodesPerSecond: (decodes * 1000) / ms,
    decodesPerCpuSecond: (decodes * 1000) / cpuMs,
    cpuMs,
    bytesPerSecond: (passes * bytesPerPass * 1000) / ms,
  };
  if (sink < 0) console.error(sink);
  reportResult(result);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
