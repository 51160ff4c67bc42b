/**
 * Part 2, decoder throughput: INFO, PLAYER and RULES decodes per second on one core over the real
 * captures, single-packet replies and split replies (reassembly and bzip2 included) apart; the
 * parsers of @fabricio-191/valve-server-query over the same single packets as a reference.
 */
import path from "node:path";
import type { BenchOptions } from "../lib/args";
import { benchScript, runChild } from "../lib/child";
import { profileMarkdown, summariseProfile } from "../lib/profile";
import { mib, num, ratio, table, type PartResult, type Verdict } from "../lib/report";
import { capturesDir } from "./captures";
import type { DecodeResult } from "./decode-child";

const INFO_TARGET = 1_000_000;

export async function runDecodePart(
  options: BenchOptions,
  outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const dir = capturesDir();
  const commands = [
    `GSINDEX_SHARED_DIR=/path/to/shared npm run bench -- --only decode --decode-ms ${options.decodeMs}`,
  ];
  if (dir === null) {
    return {
      id: "decode",
      title: "Decoder throughput",
      markdown:
        "Skipped: the real captures were not found (set GSINDEX_SHARED_DIR, or put `shared` beside the checkout).",
      commands,
      verdicts: [
        {
          what: "A2S_INFO decodes per second, one core",
          target: `> ${num(INFO_TARGET)}`,
          measured: "not measured (no captures)",
          met: null,
        },
      ],
      data: null,
      wallMs: Date.now() - started,
    };
  }
  const run = async (
    lib: string,
    kind: string,
    split: boolean,
    profileOut?: string,
  ): Promise<DecodeResult> => {
    const args = [
      "--lib",
      lib,
      "--kind",
      kind,
      "--split",
      split ? "yes" : "no",
      "--ms",
      String(options.decodeMs),
      "--dir",
      dir,
    ];
    if (profileOut !== undefined) args.push("--profile-out", profileOut);
    const { result } = await runChild<DecodeResult>(benchScript("decode/decode-child"), args);
    log(
      `decode: ${lib} ${kind}${split ? " split" : ""}: ${num(result.decodesPerSecond)}/s (${num(result.decodesPerCpuSecond)} per CPU s) over ${result.cases} cases`,
    );
    return result;
  };
  const results: DecodeResult[] = [];
  for (const kind of ["info", "players", "rules"]) {
    results.push(await run("gsindex", kind, false));
    if (kind !== "info") results.push(await run("gsindex", kind, true));
    results.push(await run("fabricio", kind, false));
  }
  let profile = "";
  if (!options.noProfile) {
    const file = path.join(outDir, "decode-info.cpuprofile");
    await run("gsindex", "info", false, file);
    profile = profileMarkdown(
      summariseProfile(file),
      "the A2S_INFO decode loop (gsindex; a separate run, the measured loop only)",
    );
  }
  const find = (lib: string, kind: string, split: boolean): DecodeResult | undefined =>
    results.find((r) => r.lib === lib && r.kind === kind && r.split === split);
  const rows = results.map((r) => {
    const peer = r.lib === "gsindex" && !r.split ? find("fabricio", r.kind, false) : undefined;
    return [
      r.lib === "gsindex" ? "gsindex" : "@fabricio-191/valve-server-query parsers",
      r.kind,
      r.split ? "split (reassembly, bzip2 where compressed)" : "single packet",
      `${r.cases}${r.rejected.length > 0 ? ` (+${r.rejected.length} rejected)` : ""}`,
      num(r.decodesPerSecond),
      `**${num(r.decodesPerCpuSecond)}**`,
      `${mib(r.bytesPerSecond)}/s`,
      peer ? ratio(r.decodesPerCpuSecond, peer.decodesPerCpuSecond) : "",
    ];
  });
  const info = find("gsindex", "info", false);
  const verdicts: Verdict[] = [
    {
      what: "A2S_INFO decodes per second, one core (real captures)",
      target: `> ${num(INFO_TARGET)}`,
      measured: info
        ? `${num(info.decodesPerCpuSecond)} per CPU second (${num(info.decodesPerSecond)} per wall second)`
        : "n/a",
      met: info ? info.decodesPerCpuSecond > INFO_TARGET : null,
      gap: info ? `${num((1 - info.decodesPerCpuSecond / INFO_TARGET) * 100, 0)} % short` : "n/a",
    },
  ];
  const rejectedNotes = results
    .filter((r) => r.rejected.length > 0)
    .map(
      (r) => `- ${r.lib} ${r.kind}${r.split ? " split" : ""} rejected: ${r.rejected.join(", ")}`,
    );
  const markdown = [
    `Captures: ${dir.replace(/^.*\/shared\//, "shared/")} (real datagrams from real servers; malformed, challenge and ping cases left out). Each row is its own process looping over every case of its kind for ${num(options.decodeMs)} ms after a warm-up, on one core; "decodes" are whole replies (bytes in, typed value out). The machine is shared, so the figure that counts is decodes per CPU second of the decoding process (what one core does when it is the decoder's alone); decodes per wall second are shown beside it.`,
    "",
    table(
      [
        "decoder",
        "kind",
        "framing",
        "cases",
        "decodes/s (wall)",
        "decodes per CPU second",
        "throughput",
        "vs peer",
      ],
      rows,
    ),
    "",
    `Target: > ${num(INFO_TARGET)} A2S_INFO decodes per second: **${verdicts[0]?.measured}**, ${verdicts[0]?.met ? "met" : "missed"}.`,
    "",
    "The peer's parsers are lenient (no bounds checks: a short packet reads as zeros or garbage) and skip work gsindex does (UTF-8 validation with the exact bytes kept for invalid names, EDF fields, the 64-bit game id as a string); they are shown as a reference for the cost of that strictness, not as an equal contender.",
    ...(rejectedNotes.length > 0
      ? ["", "Cases a decoder rejected (left out of its loop):", "", ...rejectedNotes]
      : []),
    ...(profile ? ["", profile] : []),
  ].join("\n");
  return {
    id: "decode",
    title: "Decoder throughput",
    markdown,
    commands,
    verdicts,
    data: results,
    wallMs: Date.now() - started,
  };
}
