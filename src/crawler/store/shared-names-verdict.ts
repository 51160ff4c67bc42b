/**
 * The shared-names rule's comparison (docs/fake-players.md), in memory over integer name ids: for each server,
 * how many others share enough of its names. PostgreSQL's pair aggregation did the same with one hash group
 * per pair of servers that share any name (millions at 20,000 simulated servers, and past its 30 s budget at
 * 100,000); here a pair is one increment of a counter array, so the cost is the number of (server, server,
 * shared name) triples, bounded by GENERIC_NAME_SERVERS per name.
 */
import type { FakePlayerRules } from "../fake-players";

/** One server of the pool, as the rule sees it. */
export interface NamePoolServer {
  /** Bots the server reports (0 when it does not say). */
  bots: number;
  /** Its distinct non-empty player names, usable or not. */
  names: number;
  /**
   * Ids of its names held by 2 to GENERIC_NAME_SERVERS servers of the pool (the only ones that can be shared
   * by a fake-player farm without being generic), each once.
   */
  usable: readonly number[];
}

/** The rule ran past its deadline: the caller keeps the flags as they were. */
export class SharedNamesDeadlineError extends Error {
  readonly code = "SHARED_NAMES_DEADLINE";
  constructor() {
    super("the shared-names comparison ran past its deadline");
  }
}

/** Servers compared between two looks at the clock. */
const CLOCK_EVERY = 512;

/**
 * Whether each server of `pool` fires: at least `sharedNameServers - 1` other servers each have at least
 * `sharedNamesPerServer` of its names beyond the bots it reports, and at least half of its names.
 * `deadlineMs` is a `now()` value after which it gives up (SharedNamesDeadlineError).
 */
export function sharedNamesVerdicts(
  pool: readonly NamePoolServer[],
  rules: Pick<FakePlayerRules, "sharedNameServers" | "sharedNamesPerServer">,
  deadlineMs = Infinity,
  now: () => number = Date.now,
): boolean[] {
  const postings = postingsOf(pool);
  const shared = new Int32Array(pool.length);
  const touched = new Int32Array(pool.length);
  const othersNeeded = rules.sharedNameServers - 1;
  const fires = new Array<boolean>(pool.length).fill(false);
  for (let a = 0; a < pool.length; a++) {
    if (a % CLOCK_EVERY === 0 && now() > deadlineMs) throw new SharedNamesDeadlineError();
    const server = pool[a]!;
    // k shared names with another server count when k - bots >= N and 2k >= the server's names.
    const needed = Math.max(
      rules.sharedNamesPerServer + server.bots,
      Math.ceil(server.names / 2),
      1,
    );
    if (server.usable.length < needed) continue;
    let touchedCount = 0;
    for (const nameId of server.usable) {
      for (let p = postings.start[nameId]!; p < postings.start[nameId + 1]!; p++) {
        const b = postings.servers[p]!;
        if (b === a) continue;
        if (shared[b] === 0) touched[touchedCount++] = b;
        shared[b]!++;
      }
    }
    let others = 0;
    for (let t = 0; t < touchedCount; t++) {
      const b = touched[t]!;
      if (shared[b]! >= needed) others++;
      shared[b] = 0;
    }
    fires[a] = others >= othersNeeded;
  }
  return fires;
}

/** For each name id, the pool indexes of the servers that hold it (one flat array and its offsets). */
function postingsOf(pool: readonly NamePoolServer[]): { start: Int32Array; servers: Int32Array } {
  let maxId = -1;
  let total = 0;
  for (const s of pool) {
    total += s.usable.length;
    for (const id of s.usable) if (id > maxId) maxId = id;
  }
  const start = new Int32Array(maxId + 2);
  for (const s of pool) for (const id of s.usable) start[id + 1]!++;
  for (let i = 1; i < start.length; i++) start[i]! += start[i - 1]!;
  const fill = start.slice(0, maxId + 1);
  const servers = new Int32Array(total);
  for (let a = 0; a < pool.length; a++) for (const id of pool[a]!.usable) servers[fill[id]!++] = a;
  return { start, servers };
}
