/** CPU and memory of processes from /proc (Linux): a process with its descendants, or by command name. */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuMs: number;
}

function readStat(pid: number): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const open = stat.indexOf("(");
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    // After "pid (comm) ": state ppid ... utime(12) stime(13), 0-based.
    return {
      pid,
      ppid: Number(fields[1]),
      comm: stat.slice(open + 1, close),
      cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND,
    };
  } catch {
    return null;
  }
}

function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

/** The pid and every descendant's pid. */
export function treePids(root: number): number[] {
  const stats = allStats();
  const pids = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of stats) {
      if (!pids.has(s.pid) && pids.has(s.ppid)) {
        pids.add(s.pid);
        grew = true;
      }
    }
  }
  return [...pids];
}

/** CPU ms used so far by these pids (processes that are gone count 0). */
export function cpuMsOf(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += readStat(pid)?.cpuMs ?? 0;
  return total;
}

/** CPU ms used so far by every process with this command name (e.g. 'postgres', 'redis-server'). */
export function cpuMsByName(comm: string): { pids: number[]; cpuMs: number } {
  const matching = allStats().filter((s) => s.comm === comm || s.comm.startsWith(`${comm}:`));
  return { pids: matching.map((s) => s.pid), cpuMs: matching.reduce((sum, s) => sum + s.cpuMs, 0) };
}

/** Tracks CPU of a changing set of processes (postgres forks a backend per connection). */
export class CpuMeter {
  private readonly start = new Map<number, number>();
  private readonly last = new Map<number, number>();

  constructor(private readonly select: () => number[]) {
    for (const pid of select()) {
      const s = readStat(pid);
      if (s) this.start.set(pid, s.cpuMs);
    }
  }

  /** Call now and then so processes that exit meanwhile are still counted up to their last sample. */
  sample(): void {
    for (const pid of this.select()) {
      const s = readStat(pid);
      if (s) this.last.set(pid, s.cpuMs);
    }
  }

  usedMs(): number {
    this.sample();
    let total = 0;
    for (const [pid, ms] of this.last) total += ms - (this.start.get(pid) ?? 0);
    return total;
  }
}

/** Busy CPU ms of the whole machine (all cores) from /proc/stat: other work on a shared machine included. */
export function machineBusyMs(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return ((total - idle) * 1000) / TICKS_PER_SECOND;
}

/** Peak RSS (VmHWM) of a running process. */
export function peakRssBytes(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

export function currentRssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}
