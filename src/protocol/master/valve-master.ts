/**
 * Lists a Valve UDP master (Valve's "Master Server Query Protocol"; docs/list-sources.md): pages one region from ONE
 * socket (a new source port makes the master start over) by sending the last address of each batch as the next seed,
 * until the 0.0.0.0:0 marker. Addresses are deduplicated across pages and regions. Requests are paced (the real master
 * answers about 30 packets a minute per IP, then goes silent for a minute); a page that does not come back is re-sent
 * `retries` times, and when it still does not, the listing stops short: the result says it is incomplete
 * and where to resume (region + seed), which a later call passes back as `startRegion` / `seed`.
 */
import dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import {
  DEFAULT_MASTER_REQUESTS_PER_MINUTE,
  DEFAULT_MASTER_RETRIES,
  DEFAULT_MASTER_TIMEOUT_MS,
  MAX_MASTER_PAGES,
} from "../defaults";
import { ProtocolError } from "../errors";
import type { ServerAddress } from "../types";
import { startDeadline } from "./deadline";
import {
  assertMasterFilterLength,
  buildMasterFilter,
  type MasterFilterNode,
} from "./master-filter";
import {
  ALL_MASTER_REGION_CODES,
  FIRST_SEED,
  MASTER_REGIONS,
  type MasterBatch,
  type MasterRegionName,
  decodeMasterResponse,
  encodeMasterQuery,
  formatAddress,
  isMasterRegionCode,
  parseIpv4Address,
} from "./valve-master-codec";

export interface MasterPacing {
  /** Requests sent per minute at most, re-sends included. */
  requestsPerMinute: number;
  /**
   * Waits for the send slot of each request (re-sends included) when the pace is shared with other
   * listings of the same master (concurrent regions, other processes); replaces this listing's own spacing.
   */
  waitTurn?: (signal?: AbortSignal) => Promise<void>;
}

export interface ValveMasterListOptions {
  host: string;
  port: number;
  /** A region code (0x00-0x07, 0xFF), its name, or 'all' (every code, deduplicated). */
  region: number | MasterRegionName | "all";
  /** A filter string or conditions for the builder. @defaultValue '' (everything) */
  filter?: string | readonly MasterFilterNode[];
  /** Resume after this address (a previous result's resumeFrom). @defaultValue 0.0.0.0:0 */
  seed?: ServerAddress | string;
  /** With region 'all': start at this region (a previous result's resumeRegion). */
  startRegion?: number;
  /** @defaultValue { requestsPerMinute: 20 }; false sends as fast as answers come (simulators only). */
  pacing?: MasterPacing | false;
  /** Wait for one page before it is re-sent. @defaultValue 3000 */
  timeoutMs?: number;
  /** Re-sends of one page before the listing stops short. @defaultValue 2 */
  retries?: number;
  /** Cancels the listing: it then returns what it has, incomplete, stoppedBy ABORTED. */
  signal?: AbortSignal;
  /**
   * Called with each page's NEW addresses (deduplicated), as they arrive. The next request waits for a
   * promise it returns (a consumer writing pages as they come holds the listing back while it writes); what
   * it throws ends the listing and is thrown by listValveMaster.
   */
  onBatch?: (addresses: ServerAddress[], region: number) => void | Promise<void>;
  /**
   * false: the result's `servers` stays empty and the addresses reach only onBatch, so a long listing is
   * not held in memory twice. @defaultValue true
   */
  collect?: boolean;
}

export interface ValveMasterListResult {
  /** Every address listed, each once, in the order first seen (empty with `collect: false`). */
  servers: ServerAddress[];
  /** True when every region requested was paged to its end marker. */
  complete: boolean;
  /** Seed to resume from (pass as `seed`), or null when complete. */
  resumeFrom: ServerAddress | null;
  /** Region to resume (pass as `region`, or as `startRegion` with 'all'), or null when complete. */
  resumeRegion: number | null;
  /** Why the listing stopped short (TIMEOUT = the master went silent, ABORTED, ...), or null. */
  stoppedBy: ProtocolError | null;
  /** Request packets sent, re-sends included. */
  requests: number;
}

function regionsOf(options: ValveMasterListOptions): number[] {
  const { region } = options;
  let codes: number[];
  if (region === "all") codes = [...ALL_MASTER_REGION_CODES];
  else if (typeof region === "number") codes = [region];
  else codes = [MASTER_REGIONS[region]];
  for (const code of codes) {
    if (!isMasterRegionCode(code))
      throw new ProtocolError(
        "INVALID_ARGUMENT",
        `region ${String(region)} is not a master region`,
      );
  }
  if (options.startRegion !== undefined) {
    const at = codes.indexOf(options.startRegion);
    if (at < 0)
      throw new ProtocolError(
        "INVALID_ARGUMENT",
        `startRegion ${options.startRegion} is not among the regions listed`,
      );
    codes = codes.slice(at);
  }
  return codes;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(new ProtocolError("ABORTED", "master listing aborted"));
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function resolveMaster(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const literal = isIP(host);
  if (literal !== 0) return { address: host, family: literal === 6 ? 6 : 4 };
  try {
    const found = await lookup(host);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch (err) {
    throw new ProtocolError("NETWORK", `cannot resolve master host ${host}`, { cause: err });
  }
}

/**
 * One paging session on one socket. `waitForBatch` resolves with the next batch that `accept` takes, or
 * null after `timeoutMs`; packets from any other address are dropped.
 */
class MasterSocket {
  private readonly socket: dgram.Socket;
  private waiter: ((batch: MasterBatch) => boolean) | null = null;

  constructor(private readonly master: { address: string; port: number; family: 4 | 6 }) {
    this.socket = dgram.createSocket(master.family === 6 ? "udp6" : "udp4");
    this.socket.on("error", () => undefined); // an ICMP error surfaces as silence, handled by the deadline
    this.socket.on("message", (packet, remote) => {
      if (remote.address !== this.master.address || remote.port !== this.master.port) return;
      let batch: MasterBatch;
      try {
        batch = decodeMasterResponse(packet);
      } catch {
        return; // not a batch: keep waiting; the deadline handles a master that only sends garbage
      }
      if (this.waiter?.(batch)) this.waiter = null;
    });
  }

  send(packet: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.send(packet, this.master.port, this.master.address, (err) => {
        if (err)
          reject(
            new ProtocolError("NETWORK", `cannot send to the master: ${err.message}`, {
              cause: err,
            }),
          );
        else resolve();
      });
    });
  }

  waitForBatch(
    accept: (batch: MasterBatch) => boolean,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<MasterBatch | null> {
    return new Promise((resolve, reject) => {
      const deadline = startDeadline(timeoutMs, signal);
      const onAbort = (): void => {
        this.waiter = null;
        deadline.dispose();
        if (deadline.timedOut) resolve(null);
        else reject(new ProtocolError("ABORTED", "master listing aborted"));
      };
      this.waiter = (batch) => {
        if (!accept(batch)) return false;
        deadline.signal.removeEventListener("abort", onAbort);
        deadline.dispose();
        resolve(batch);
        return true;
      };
      if (deadline.signal.aborted) onAbort();
      else deadline.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  close(): void {
    this.socket.close();
  }
}

/**
 * Lists a Valve master. Never throws for silence or abort: those give an incomplete, resumable result.
 * @throws ProtocolError INVALID_ARGUMENT (region, seed, filter values) or FILTER_TOO_LONG, before sending anything.
 */
export async function listValveMaster(
  options: ValveMasterListOptions,
): Promise<ValveMasterListResult> {
  const regions = regionsOf(options);
  const filter =
    typeof options.filter === "string"
      ? assertMasterFilterLength(options.filter)
      : buildMasterFilter(options.filter ?? []);
  const pacing =
    options.pacing === undefined
      ? { requestsPerMinute: DEFAULT_MASTER_REQUESTS_PER_MINUTE }
      : options.pacing;
  if (pacing !== false && !(pacing.requestsPerMinute > 0))
    throw new ProtocolError("INVALID_ARGUMENT", "pacing.requestsPerMinute must be positive");
  const intervalMs = pacing === false ? 0 : 60_000 / pacing.requestsPerMinute;
  const timeoutMs = options.timeoutMs ?? DEFAULT_MASTER_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_MASTER_RETRIES;
  let seed =
    options.seed === undefined
      ? FIRST_SEED
      : typeof options.seed === "string"
        ? parseIpv4Address(options.seed)
        : options.seed;

  const master = await resolveMaster(options.host);
  const socket = new MasterSocket({ ...master, port: options.port });
  const seen = new Set<string>();
  const servers: ServerAddress[] = [];
  const collect = options.collect !== false;
  let requests = 0;
  let lastSentAt = -Infinity;

  const stop = (region: number, error: ProtocolError): ValveMasterListResult => ({
    servers,
    complete: false,
    resumeFrom: seed,
    resumeRegion: region,
    stoppedBy: error,
    requests,
  });

  try {
    for (const region of regions) {
      // With one region, the two sets would hold the same addresses: a region of 90,000 servers once, not twice.
      const seenInRegion = regions.length === 1 ? seen : new Set<string>();
      // A late answer to an earlier request repeats addresses already paged; only a batch with something
      // new (or the end marker) answers the current seed.
      const accept = (batch: MasterBatch): boolean =>
        batch.end || batch.addresses.some((a) => !seenInRegion.has(formatAddress(a)));
      for (let page = 0; ; page++) {
        if (page >= MAX_MASTER_PAGES)
          return stop(
            region,
            new ProtocolError(
              "UNEXPECTED_RESPONSE",
              `region ${region} did not end after ${page} pages`,
            ),
          );
        const packet = encodeMasterQuery({ region, seed, filter });
        let batch: MasterBatch | null = null;
        for (let attempt = 0; attempt <= retries && batch === null; attempt++) {
          try {
            if (pacing !== false && pacing.waitTurn) {
              await pacing.waitTurn(options.signal);
              if (options.signal?.aborted)
                throw new ProtocolError("ABORTED", "master listing aborted");
            } else await sleep(lastSentAt + intervalMs - Date.now(), options.signal);
            lastSentAt = Date.now();
            requests++;
            const waiting = socket.waitForBatch(accept, timeoutMs, options.signal);
            await socket.send(packet);
            batch = await waiting;
          } catch (err) {
            if (err instanceof ProtocolError) return stop(region, err);
            throw err;
          }
        }
        if (batch === null) {
          return stop(
            region,
            new ProtocolError(
              "TIMEOUT",
              `master ${options.host}:${options.port} went silent (region ${region}, seed ${formatAddress(seed)}, ${retries + 1} attempts)`,
            ),
          );
        }
        const fresh: ServerAddress[] = [];
        for (const address of batch.addresses) {
          const id = formatAddress(address);
          if (seen.has(id)) {
            seenInRegion.add(id);
            continue;
          }
          seen.add(id);
          seenInRegion.add(id);
          if (collect) servers.push(address);
          fresh.push(address);
        }
        if (fresh.length > 0) await options.onBatch?.(fresh, region);
        const last = batch.addresses[batch.addresses.length - 1];
        if (batch.end) break;
        if (last === undefined)
          return stop(
            region,
            new ProtocolError(
              "UNEXPECTED_RESPONSE",
              "master sent an empty batch without the end marker",
            ),
          );
        seed = last;
      }
      seed = FIRST_SEED;
    }
  } finally {
    socket.close();
  }
  return {
    servers,
    complete: true,
    resumeFrom: null,
    resumeRegion: null,
    stoppedBy: null,
    requests,
  };
}
