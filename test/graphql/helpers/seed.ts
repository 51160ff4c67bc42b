/**
 * A deterministic index for the API tests: a source, a crawl, a fleet of game servers with every
 * attribute the filters look at, and history (raw samples inside the window, day rows before it,
 * population rollups) whose values can be computed back in the assertions.
 */
import { applyRetention, rollupRange } from "../../../src/crawler/store/history-store";
import { ensureSamplePartition } from "../../../src/crawler/store/partitions";
import { utcDay } from "../../../src/history/time";
import type { PrismaClient } from "../../../src/generated/prisma/client";

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export const MAPS = ["de_dust2", "de_inferno", "cs_office", "de_dust", "ctf_2fort", "pl_upward"];
const NAMES = ["Alpha", "bravo", "Charlie", "delta", "Echo"];

export interface FleetServer {
  i: number;
  address: string;
  queryPort: number;
  name: string | null;
  map: string | null;
  folder: string | null;
  appId: number | null;
  players: number;
  maxPlayers: number;
  bots: number;
  passwordProtected: boolean;
  vacSecured: boolean;
  dedicated: boolean;
  os: string;
  status: "ONLINE" | "OFFLINE" | "DELISTED" | "UNKNOWN";
  country: string;
  region: number;
  keywords: string[];
  pingMs: number | null;
  lastAnsweredAt: Date | null;
  firstSeenAt: Date;
  suspectedFake: boolean;
  isRelay: boolean;
  hidden: boolean;
  playerNames: string[];
}

export function fleetServer(i: number, now: Date): FleetServer {
  const unknown = i % 30 === 29;
  const map = unknown ? null : (MAPS[i % MAPS.length] as string);
  const tf = map !== null && (map.startsWith("ctf") || map.startsWith("pl"));
  const players = unknown ? 0 : (i * 7) % 33;
  const status = unknown
    ? "UNKNOWN"
    : i % 40 === 39
      ? "DELISTED"
      : i % 17 === 0
        ? "OFFLINE"
        : "ONLINE";
  return {
    i,
    address:
      i % 25 === 3
        ? `2001:db8::${(i + 1).toString(16)}`
        : `127.0.${Math.floor(i / 100)}.${(i % 100) + 1}`,
    queryPort: 27015 + (i % 7),
    name: unknown
      ? null
      : `${NAMES[i % NAMES.length] as string} server ${String(i).padStart(3, "0")}`,
    map,
    folder: map === null ? null : tf ? "tf" : "cstrike",
    appId: map === null ? null : tf ? 440 : 10,
    players,
    maxPlayers: 32,
    bots: i % 4 === 0 ? 2 : 0,
    passwordProtected: i % 10 === 0,
    vacSecured: i % 3 !== 0,
    dedicated: i % 9 !== 0,
    os: ["linux", "windows", "mac"][i % 3] as string,
    status,
    country: ["DE", "US", "FR", "BR"][i % 4] as string,
    region: [3, 0, 3, 2][i % 4] as number,
    keywords: [
      ...(i % 2 === 0 ? ["secure", "casual"] : ["hardcore"]),
      ...(i % 5 === 0 ? ["rtv"] : []),
    ],
    pingMs: unknown || i % 11 === 0 ? null : 10 + ((i * 13) % 90),
    lastAnsweredAt: unknown ? null : new Date(now.getTime() - i * 60_000),
    firstSeenAt: new Date(now.getTime() - i * 3 * HOUR),
    suspectedFake: i % 50 === 7,
    isRelay: i === 13,
    hidden: i === 21,
    playerNames: Array.from({ length: Math.min(players, 5) }, (_, k) => `player_${i}_${k}`),
  };
}

export interface SeededIndex {
  sourceId: number;
  crawlId: number;
  servers: FleetServer[];
  /** id of fleet server i. */
  ids: number[];
  now: Date;
}

export async function seedServers(
  db: PrismaClient,
  count: number,
  now = new Date(),
): Promise<SeededIndex> {
  const source = await db.masterSource.create({
    data: { name: "sim", kind: "VALVE_UDP", host: "127.0.0.1", port: 27010 },
  });
  const crawl = await db.crawl.create({
    data: {
      key: `sim-${now.getTime()}`,
      sourceId: source.id,
      startedAt: now,
      finishedAt: now,
      listed: count,
      queried: count,
      answered: count - 5,
      failed: 5,
      written: count,
    },
  });
  await db.crawlRun.createMany({
    data: [0, 3].map((region) => ({
      crawlId: crawl.id,
      region,
      found: count / 2,
      answered: count / 2 - 2,
      failed: 2,
    })),
  });
  const servers = Array.from({ length: count }, (_, i) => fleetServer(i, now));
  await db.gameServer.createMany({
    data: servers.map((s) => ({
      address: s.address,
      queryPort: s.queryPort,
      protocol: "source",
      region: s.region,
      country: s.country,
      status: s.status,
      firstSeenAt: s.firstSeenAt,
      lastListedAt: now,
      lastQueriedAt: now,
      lastAnsweredAt: s.lastAnsweredAt,
      suspectedFake: s.suspectedFake,
      isRelay: s.isRelay,
      hidden: s.hidden,
      sourceId: source.id,
      name: s.name,
      map: s.map,
      folder: s.folder,
      game: s.folder === "tf" ? "Team Fortress" : s.folder === null ? null : "Counter-Strike",
      appId: s.appId,
      players: s.players,
      maxPlayers: s.maxPlayers,
      bots: s.bots,
      passwordProtected: s.passwordProtected,
      vacSecured: s.vacSecured,
      dedicated: s.dedicated,
      os: s.os,
      keywords: s.keywords,
      pingMs: s.pingMs,
      playerList: s.playerNames.map((name, k) => ({ name, score: k, durationSeconds: 60.5 * k })),
      rules: [{ name: "mp_timelimit", value: "30" }],
      playerNames: s.playerNames.join("\n"),
    })),
  });
  // inet goes through SQL (the address filters compare it)
  await db.$executeRaw`UPDATE game_server SET ip = address::inet`;
  const rows = await db.gameServer.findMany({
    select: { id: true, address: true, queryPort: true },
  });
  const idOf = new Map(rows.map((r) => [`${r.address}|${r.queryPort}`, Number(r.id)]));
  return {
    sourceId: source.id,
    crawlId: Number(crawl.id),
    servers,
    ids: servers.map((s) => idOf.get(`${s.address}|${s.queryPort}`) as number),
    now,
  };
}

/** Players of server `i` in UTC hour `h` of any day (every sample of that hour says the same). */
export const hourlyPlayers = (i: number, h: number): number => (i + h) % 20;
/** Map in hour h: 6-hour blocks alternate between two maps. */
export const hourlyMap = (h: number): string =>
  Math.floor(h / 6) % 2 === 0 ? "de_dust2" : "de_inferno";
/** Every server is offline (unanswered samples) during this UTC hour of every day. */
export const OFFLINE_HOUR = 3;
export const SAMPLE_STEP_MS = 20 * 60_000;

/**
 * History through the real pipeline: raw samples every 20 minutes from `from` to `now` into the day
 * partitions (ensureSamplePartition), rolled up by the crawler's rollupRange (server_day and
 * population_rollup), then the retention job drops the raw days older than the window, as in
 * production.
 */
export async function seedHistory(
  db: PrismaClient,
  crawlId: number,
  servers: { i: number; id: number }[],
  from: Date,
  now: Date,
  rawDays: number,
): Promise<void> {
  for (let d = utcDay(from).getTime(); d <= now.getTime(); d += DAY)
    await ensureSamplePartition(db, new Date(d));
  const sid: number[] = [];
  const crawl: number[] = [];
  const at: Date[] = [];
  const online: boolean[] = [];
  const players: number[] = [];
  const maps: (string | null)[] = [];
  for (const { i, id } of servers) {
    for (let t = from.getTime(), k = 0; t < now.getTime(); t += SAMPLE_STEP_MS, k++) {
      const h = new Date(t).getUTCHours();
      const up = h !== OFFLINE_HOUR;
      sid.push(id);
      crawl.push(crawlId + k); // one crawl per sample time, as the crawler files them
      at.push(new Date(t));
      online.push(up);
      players.push(up ? hourlyPlayers(i, h) : 0);
      maps.push(up ? hourlyMap(h) : null);
    }
  }
  await db.$executeRaw`
    INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
    SELECT s, a, c, o, p::smallint, 0::smallint, 32::smallint, m, 20::smallint
    FROM unnest(${sid}::int[], ${crawl}::int[], ${at}::timestamptz[], ${online}::boolean[], ${players}::int[], ${maps}::text[]) AS x(s, c, a, o, p, m)`;
  await rollupRange(db, from, now);
  await applyRetention(db, { rawDays, rollupDays: 0, now });
}
