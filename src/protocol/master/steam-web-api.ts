/**
 * The Steam Web API as a list source: IGameServersService/GetServerList/v1 (docs/list-sources.md). One call returns at
 * most 10,000 servers, so a listing splits its query until no part is capped: empty vs not empty, linux vs not, then
 * by map, then by name prefix, then per address (\gameaddr\). Each split is exhaustive: a "rest" part (\nor\ of
 * the values seen) covers whatever the values did not; parts may overlap and records are deduplicated by addr.
 * Calls are paced, HTTP 429 Retry-After is honoured, and the key is never logged nor put in an error message.
 */
import {
  DEFAULT_STEAM_WEB_API_REQUESTS_PER_MINUTE,
  DEFAULT_STEAM_WEB_API_TIMEOUT_MS,
  DEFAULT_STEAM_WEB_API_URL,
  MAX_MASTER_FILTER_BYTES,
  MAX_RETRY_AFTER_MS,
  STEAM_WEB_API_MAX_PER_CALL,
  DEFAULT_RETRY_AFTER_MS,
  DEFAULT_STEAM_WEB_API_MAX_CALLS,
  DEFAULT_STEAM_WEB_API_RATE_LIMITED_RETRIES,
  DEFAULT_STEAM_WEB_API_RETRIES,
  DEFAULT_STEAM_WEB_API_RETRY_DELAY_MS,
} from "../defaults";
import { ProtocolError } from "../errors";
import { startDeadline } from "./deadline";
import {
  MasterFilter,
  type MasterFilterNode,
  type MasterFilterPair,
  formatMasterFilter,
  masterFilterBytes,
  parseMasterFilter,
} from "./master-filter";
import { type SteamWebApiServer, readSteamWebApiRecord } from "./steam-web-api-record";
import { formatAddress } from "./valve-master-codec";

export interface SteamWebApiListOptions {
  /** The Web API key. Never logged, never in an error message. */
  key: string;
  /** @defaultValue 'https://api.steampowered.com' */
  baseUrl?: string;
  /** Filter in the master grammar. @defaultValue '' */
  filter?: string | readonly MasterFilterNode[];
  /** The endpoint's cap per call; a call returning this many is split. @defaultValue 10000 */
  limitPerCall?: number;
  /** @defaultValue { requestsPerMinute: 60 } */
  pacing?: { requestsPerMinute: number } | false;
  /** Deadline of one HTTP call. @defaultValue 30000 */
  timeoutMs?: number;
  /** Re-tries of one call after a network error or HTTP 5xx. @defaultValue 2 */
  retries?: number;
  /** First wait before such a re-try; doubles each time. @defaultValue 1000 */
  retryDelayMs?: number;
  /** 429s tolerated for one call before the listing stops (RATE_LIMITED). @defaultValue 5 */
  maxRateLimitedRetries?: number;
  /** A Retry-After above this stops the listing instead of waiting. @defaultValue 120000 */
  maxRetryAfterMs?: number;
  /** Stop (incomplete) after this many calls. @defaultValue 2000 */
  maxCalls?: number;
  /** Longest filter the endpoint accepts. @defaultValue 190 */
  maxFilterBytes?: number;
  /** false: one call, no splitting (the result says whether it was capped). @defaultValue true */
  split?: boolean;
  signal?: AbortSignal;
  /** Called with each call's NEW servers (deduplicated by addr), as they arrive. */
  onBatch?: (servers: SteamWebApiServer[]) => void;
  /**
   * Makes each HTTP call instead of the global fetch: the crawler's connects only to addresses its policy
   * allows. One that throws a ProtocolError (ADDRESS_REFUSED) stops the listing at once. @defaultValue fetch
   */
  fetch?: (
    url: string,
    init: { signal: AbortSignal; headers: Record<string, string> },
  ) => Promise<Response>;
}

export interface SteamWebApiListResult {
  servers: SteamWebApiServer[];
  /** True when no part of the query is still capped and no call failed. */
  complete: boolean;
  /** Filters of the parts still capped (could not be split further within limits). */
  cappedFilters: string[];
  calls: number;
  /** Records without a usable addr. */
  skippedRecords: number;
  stoppedBy: ProtocolError | null;
}

type Dimension = "empty" | "os" | "map" | "name" | "addr";
const DIMENSIONS: readonly Dimension[] = ["empty", "os", "map", "name", "addr"];
const MAX_NAME_PREFIX = 32;

/** One part of the query: the caller's filter AND `conditions` AND name prefix AND NOT(any of `exclude`). */
interface Part {
  conditions: MasterFilterNode[];
  dimension: number;
  namePrefix: string;
  exclude: MasterFilterPair[];
  /** Values of this dimension that already have their own part (shared along a chain of rest parts). */
  covered?: Set<string>;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ProtocolError("ABORTED", "Steam Web API listing aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Retry-After: delay-seconds or an HTTP date. */
export function parseRetryAfterMs(header: string | null, nowMs = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

interface CallContext {
  options: SteamWebApiListOptions;
  endpoint: string;
  limit: number;
  intervalMs: number;
  lastCallAt: number;
  calls: number;
}

/** One GetServerList call, with re-tries; returns the raw records. */
async function callGetServerList(ctx: CallContext, filter: string): Promise<unknown[]> {
  const { options } = ctx;
  const retries = options.retries ?? DEFAULT_STEAM_WEB_API_RETRIES;
  const maxRateLimited =
    options.maxRateLimitedRetries ?? DEFAULT_STEAM_WEB_API_RATE_LIMITED_RETRIES;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS;
  let failures = 0;
  let rateLimited = 0;
  for (;;) {
    await sleep(ctx.lastCallAt + ctx.intervalMs - Date.now(), options.signal);
    ctx.lastCallAt = Date.now();
    ctx.calls++;
    const url = new URL(ctx.endpoint);
    url.searchParams.set("key", options.key);
    url.searchParams.set("filter", filter);
    url.searchParams.set("limit", String(ctx.limit));
    const deadline = startDeadline(
      options.timeoutMs ?? DEFAULT_STEAM_WEB_API_TIMEOUT_MS,
      options.signal,
    );
    let failure: ProtocolError;
    try {
      const init = { signal: deadline.signal, headers: { accept: "application/json" } };
      const response = await (options.fetch
        ? options.fetch(url.toString(), init)
        : fetch(url, init));
      if (response.status === 429) {
        await response.body?.cancel();
        const waitMs =
          parseRetryAfterMs(response.headers.get("retry-after")) ?? DEFAULT_RETRY_AFTER_MS;
        if (++rateLimited > maxRateLimited || waitMs > maxRetryAfterMs) {
          throw new ProtocolError(
            "RATE_LIMITED",
            `Steam Web API answered 429 ${rateLimited} times (Retry-After ${waitMs} ms)`,
          );
        }
        await sleep(waitMs, options.signal);
        continue;
      }
      if (response.ok) {
        let body: unknown;
        try {
          body = await response.json();
        } catch (err) {
          throw new ProtocolError(
            "UNEXPECTED_RESPONSE",
            "Steam Web API answered something that is not JSON",
            { cause: err },
          );
        }
        const inner =
          typeof body === "object" && body !== null
            ? (body as { response?: unknown }).response
            : undefined;
        if (typeof inner !== "object" || inner === null)
          throw new ProtocolError(
            "UNEXPECTED_RESPONSE",
            'Steam Web API answer has no "response" object',
          );
        const servers = (inner as { servers?: unknown }).servers;
        if (servers === undefined) return []; // the endpoint leaves "servers" out when nothing matches
        if (!Array.isArray(servers))
          throw new ProtocolError("UNEXPECTED_RESPONSE", 'Steam Web API "servers" is not a list');
        return servers;
      }
      await response.body?.cancel();
      // 4xx other than 429 (bad key, bad request) will not get better with re-tries.
      if (response.status < 500)
        throw new ProtocolError(
          "UNEXPECTED_RESPONSE",
          `Steam Web API answered HTTP ${response.status}${response.status === 403 ? " (key refused)" : ""}`,
        );
      failure = new ProtocolError(
        "UNEXPECTED_RESPONSE",
        `Steam Web API answered HTTP ${response.status}`,
      );
    } catch (err) {
      if (err instanceof ProtocolError) throw err;
      if (options.signal?.aborted)
        throw new ProtocolError("ABORTED", "Steam Web API listing aborted", { cause: err });
      // fetch errors carry no URL, so the key cannot leak through `cause`.
      failure = deadline.timedOut
        ? new ProtocolError("TIMEOUT", "Steam Web API call timed out", { cause: err })
        : new ProtocolError("NETWORK", `Steam Web API call failed: ${(err as Error).message}`, {
            cause: err,
          });
    } finally {
      deadline.dispose();
    }
    if (++failures > retries) throw failure;
    await sleep(
      (options.retryDelayMs ?? DEFAULT_STEAM_WEB_API_RETRY_DELAY_MS) * 2 ** (failures - 1),
      options.signal,
    );
  }
}

function valueOf(dimension: Dimension, server: SteamWebApiServer, part: Part): string | null {
  switch (dimension) {
    case "map":
      return server.status.map;
    case "addr":
      return server.address.host;
    case "name": {
      // Lower-cased: name_match is case-insensitive. '*' and '\' cannot start a literal prefix; the rest covers them.
      const next = server.status.name
        .slice(part.namePrefix.length, part.namePrefix.length + 1)
        .toLowerCase();
      return next === "" || next === "*" || next === "\\" ? null : part.namePrefix + next;
    }
    default:
      return null;
  }
}

function conditionFor(dimension: Dimension, value: string): MasterFilterPair | null {
  try {
    switch (dimension) {
      case "map":
        return MasterFilter.map(value);
      case "addr":
        return MasterFilter.gameaddr(value);
      case "name":
        return MasterFilter.nameMatch(`${value}*`);
      default:
        return null;
    }
  } catch {
    return null; // a value the grammar cannot carry stays in the rest part
  }
}

/** Lists the Steam Web API, splitting capped queries. Never throws for endpoint trouble: see stoppedBy. */
export async function listSteamWebApi(
  options: SteamWebApiListOptions,
): Promise<SteamWebApiListResult> {
  if (options.key === "")
    throw new ProtocolError("INVALID_ARGUMENT", "a Steam Web API key is required");
  const base =
    typeof options.filter === "string"
      ? parseMasterFilter(options.filter)
      : [...(options.filter ?? [])];
  const pacing =
    options.pacing === undefined
      ? { requestsPerMinute: DEFAULT_STEAM_WEB_API_REQUESTS_PER_MINUTE }
      : options.pacing;
  const maxFilterBytes = options.maxFilterBytes ?? MAX_MASTER_FILTER_BYTES;
  const maxCalls = options.maxCalls ?? DEFAULT_STEAM_WEB_API_MAX_CALLS;
  const ctx: CallContext = {
    options,
    endpoint: `${(options.baseUrl ?? DEFAULT_STEAM_WEB_API_URL).replace(/\/+$/, "")}/IGameServersService/GetServerList/v1/`,
    limit: options.limitPerCall ?? STEAM_WEB_API_MAX_PER_CALL,
    intervalMs: pacing === false ? 0 : 60_000 / pacing.requestsPerMinute,
    lastCallAt: -Infinity,
    calls: 0,
  };
  const byAddress = new Map<string, SteamWebApiServer>();
  const cappedFilters: string[] = [];
  let skippedRecords = 0;
  let stoppedBy: ProtocolError | null = null;

  const filterOf = (part: Part): string => {
    const nodes = [...base, ...part.conditions];
    if (part.namePrefix !== "") nodes.push(MasterFilter.nameMatch(`${part.namePrefix}*`));
    if (part.exclude.length > 0) nodes.push(MasterFilter.nor(...part.exclude));
    return formatMasterFilter(nodes);
  };
  const fits = (part: Part): boolean => masterFilterBytes(filterOf(part)) <= maxFilterBytes;

  /** `part` again, split by the next dimension from now on (its exclusions become a fixed condition). */
  const advance = (part: Part): Part => ({
    conditions:
      part.exclude.length > 0
        ? [...part.conditions, MasterFilter.nor(...part.exclude)]
        : part.conditions,
    dimension: part.dimension + 1,
    namePrefix: part.namePrefix,
    exclude: [],
  });

  /** The parts that together cover `part` (which came back capped with `records`). */
  const splitPart = (part: Part, records: SteamWebApiServer[]): Part[] => {
    const dimension = DIMENSIONS[part.dimension];
    const next = { ...part, dimension: part.dimension + 1 };
    switch (dimension) {
      case "empty":
        return [
          { ...next, conditions: [...part.conditions, MasterFilter.noPlayers()] },
          { ...next, conditions: [...part.conditions, MasterFilter.notEmpty()] },
        ];
      case "os":
        return [
          { ...next, conditions: [...part.conditions, MasterFilter.linux()] },
          { ...next, conditions: [...part.conditions, MasterFilter.nor(MasterFilter.linux())] },
        ];
      case "map":
      case "addr":
      case "name": {
        if (dimension === "name" && part.namePrefix.length >= MAX_NAME_PREFIX)
          return [advance(part)];
        // `covered`: values that already have their own part along this chain of rest parts.
        const covered = part.covered ?? new Set<string>();
        const counts = new Map<string, { condition: MasterFilterPair; count: number }>();
        for (const server of records) {
          const value = valueOf(dimension, server, part);
          const condition = value === null ? null : conditionFor(dimension, value);
          if (condition === null) continue;
          const entry = counts.get(condition.value) ?? { condition, count: 0 };
          entry.count++;
          counts.set(condition.value, entry);
        }
        const fresh = [...counts.values()]
          .filter((e) => !covered.has(e.condition.value))
          .sort((a, b) => b.count - a.count);
        const children: Part[] = fresh.map(({ condition }) => {
          covered.add(condition.value);
          if (dimension === "name")
            return {
              conditions: part.conditions,
              dimension: part.dimension,
              namePrefix: condition.value.slice(0, -1),
              exclude: [],
            };
          return {
            conditions: [...part.conditions, condition],
            dimension: part.dimension + 1,
            namePrefix: part.namePrefix,
            exclude: [],
          };
        });
        // The rest: this part minus the biggest values that fit the length limit (values left out of the
        // exclusion have their own parts too: overlaps are deduplicated). When no new value fits, the rest
        // moves on to the next dimension instead.
        const rest: Part = { ...part, exclude: [...part.exclude], covered };
        for (const { condition } of fresh) {
          rest.exclude.push(condition);
          if (!fits(rest)) {
            rest.exclude.pop();
            break;
          }
        }
        children.push(rest.exclude.length > part.exclude.length ? rest : advance(part));
        return children;
      }
      default:
        return []; // no dimension left: the part stays capped
    }
  };

  const queue: Part[] = [{ conditions: [], dimension: 0, namePrefix: "", exclude: [] }];
  const initial = filterOf(queue[0] as Part);
  if (masterFilterBytes(initial) > maxFilterBytes) {
    throw new ProtocolError(
      "FILTER_TOO_LONG",
      `filter is ${masterFilterBytes(initial)} bytes; the endpoint accepts at most ${maxFilterBytes}`,
    );
  }
  while (queue.length > 0) {
    const part = queue.shift() as Part;
    const filter = filterOf(part);
    if (ctx.calls >= maxCalls) {
      cappedFilters.push(filter);
      stoppedBy ??= new ProtocolError("RATE_LIMITED", `stopped after ${maxCalls} calls (maxCalls)`);
      continue;
    }
    let records: unknown[];
    try {
      records = await callGetServerList(ctx, filter);
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      stoppedBy = err;
      cappedFilters.push(filter, ...queue.map(filterOf));
      break;
    }
    const servers: SteamWebApiServer[] = [];
    const fresh: SteamWebApiServer[] = [];
    for (const record of records) {
      const server = readSteamWebApiRecord(record);
      if (server === null) {
        skippedRecords++;
        continue;
      }
      servers.push(server);
      const id = formatAddress(server.address);
      if (!byAddress.has(id)) {
        byAddress.set(id, server);
        fresh.push(server);
      }
    }
    if (fresh.length > 0) options.onBatch?.(fresh);
    if (records.length < ctx.limit) continue;
    const children = options.split === false ? [] : splitPart(part, servers);
    // A child that does not fit the length limit cannot be asked: its share of this part stays unlisted.
    if (children.length === 0 || !children.every(fits)) cappedFilters.push(filter);
    queue.push(...children.filter(fits));
  }
  return {
    servers: [...byAddress.values()],
    complete: cappedFilters.length === 0 && stoppedBy === null,
    cappedFilters,
    calls: ctx.calls,
    skippedRecords,
    stoppedBy,
  };
}
