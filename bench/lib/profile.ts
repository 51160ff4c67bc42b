/**
 * Summarises a V8 .cpuprofile (node --cpu-prof) into the functions with the most self time, and into
 * where the time went by origin (gsindex code, a dependency, node internals, GC, idle), so that each
 * figure in BENCHMARKS.md carries the profiler's answer to "what limits it".
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { num, table } from "./report";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by function, largest first. */
  top: Array<{ fn: string; where: string; selfMs: number; share: number }>;
  /** Self time by origin, largest first. */
  byOrigin: Array<{ origin: string; selfMs: number; share: number }>;
}

function originOf(url: string, fn: string): string {
  if (fn === "(idle)") return "idle (waiting for I/O)";
  if (fn === "(garbage collector)") return "garbage collector";
  if (fn === "(program)") return "V8/native (program)";
  if (url === "") return "native / builtins";
  if (url.startsWith("node:")) return `node ${url.slice(5).split("/")[0] ?? ""}`.trim();
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1] ?? ""}` : (rest[0] ?? "dependency");
  }
  if (url.includes("/dist-bench/bench/")) return "bench harness";
  const code = /\/(?:dist-bench\/src|dist|src)\/(.*)$/.exec(url);
  if (code) {
    const dir = (code[1] ?? "").split("/").slice(0, -1).join("/");
    if (dir.startsWith("generated")) return "Prisma generated client";
    return `gsindex ${dir || "(root)"}`;
  }
  return path.basename(url);
}

function shortWhere(url: string, line: number): string {
  if (url === "") return "";
  const nm = url.lastIndexOf("node_modules/");
  const code = /\/((?:dist-bench\/)?(?:src|dist|bench)\/.*)$/.exec(url);
  const rel =
    nm >= 0 ? url.slice(nm + 13) : code ? (code[1] ?? url) : url.replace(/^file:\/\//, "");
  return `${rel}:${line + 1}`;
}

export function summariseProfile(file: string, topN = 12): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i] ?? 0));
  }
  const byFn = new Map<string, { fn: string; where: string; us: number }>();
  const byOrigin = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const fn = node.callFrame.functionName || "(anonymous)";
    const where = shortWhere(node.callFrame.url, node.callFrame.lineNumber);
    const key = `${fn}@${where}`;
    const entry = byFn.get(key) ?? { fn, where, us: 0 };
    entry.us += us;
    byFn.set(key, entry);
    const origin = originOf(node.callFrame.url, fn);
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + us);
    total += us;
  }
  const share = (us: number): number => (total > 0 ? us / total : 0);
  return {
    totalMs: total / 1000,
    top: [...byFn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topN)
      .map((e) => ({ fn: e.fn, where: e.where, selfMs: e.us / 1000, share: share(e.us) })),
    byOrigin: [...byOrigin]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([origin, us]) => ({ origin, selfMs: us / 1000, share: share(us) })),
  };
}

/** The newest .cpuprofile in a directory. */
export function latestProfile(dir: string): string | null {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort();
  const last = files[files.length - 1];
  return last === undefined ? null : path.join(dir, last);
}

export function profileMarkdown(summary: ProfileSummary, label: string): string {
  const origins = table(
    ["where the CPU went", "self ms", "share"],
    summary.byOrigin.map((o) => [o.origin, num(o.selfMs), `${num(o.share * 100, 1)} %`]),
  );
  const top = table(
    ["function", "at", "self ms", "share"],
    summary.top.map((t) => [`\`${t.fn}\``, t.where, num(t.selfMs), `${num(t.share * 100, 1)} %`]),
  );
  return `Profile of ${label} (node --cpu-prof, ${num(summary.totalMs)} ms sampled):\n\n${origins}\n\nTop functions by self time:\n\n${top}`;
}
