/**
 * A deterministic index for the API tests: a source, a crawl, a fleet of game servers with every
 * attribute the filters look at, and history (raw samples inside the window, day rows before it,
 * population rollups) whose values can be computed back in the assertions.
 */
import type { PrismaClient } from '../../../src/generated/prisma/client';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export const MAPS = ['de_dust2', 'de_inferno', 'cs_office', 'de_dust', 'ctf_2fort', 'pl_upward'];
const NAMES = ['Alpha', 'bravo', 'Charlie', 'delta', 'Echo'];

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
  status: 'ONLINE' | 'OFFLINE' | 'DELISTED' | 'UNKNOWN';
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
  const tf = map !== null && (map.startsWith('ctf') || map.startsWith('pl'));
  const players = unknown ? 0 : (i * 7) % 33;
  const status = unknown ? 'UNKNOWN' : i % 40 === 39 ? 'DELISTED' : i % 17 === 0 ? 'OFFLINE' : 'ONLINE';
  return {
    i,
    address: i % 25 === 3 ? `2001:db8::${(i + 1).toString(16)}` : `127.0.${Math.floor(i / 100)}.${(i % 100) + 1}`,
    queryPort: 27015 + (i % 7),
    name: unknown ? null : `${NAMES[i % NAMES.length] as string} server ${String(i).padStart(3, '0')}`,
    map,
    folder: map === null ? null : tf ? 'tf' : 'cstrike',
    appId: map === null ? null : tf ? 440 : 10,
    players,
    maxPlayers: 32,
    bots: i % 4 === 0 ? 2 : 0,
    passwordProtected: i % 10 === 0,
    vacSecured: i % 3 !== 0,
    dedicated: i % 9 !== 0,
    os: ['linux', 'windows', 'mac'][i % 3] as string,
    status,
    country: ['DE', 'US', 'FR', 'BR'][i % 4] as string,
    region: [3, 0, 3, 2][i % 4] as number,
    keywords: [...(i % 2 === 0 ? ['secure', 'casual'] : ['hardcore']), ...(i % 5 === 0 ? ['rtv'] : [])],
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

export async function seedServers(db: PrismaClient, count: number, now = new Date()): Promise<SeededIndex> {
  const source = await db.masterSource.create({ data: { name: 'sim', kind: 'VALVE_UDP', host: '127.0.0.1', port: 27010 } });
  const crawl = await db.crawl.create({ data: { key: `sim-${now.getTime()}`, sourceId: source.id, startedAt: now, finishedAt: now, listed: count, queried: count, answered: count - 5, failed: 5, written: count } });
  await db.crawlRun.createMany({ data: [0, 3].map((region) => ({ crawlId: crawl.id, region, found: count / 2, answered: count / 2 - 2, failed: 2 })) });
  const servers = Array.from({ length: count }, (_, i) => fleetServer(i, now));
  await db.gameServer.createMany({
    data: servers.map((s) => ({
      address: s.address,
      queryPort: s.queryPort,
      protocol: 'source',
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
      game: s.folder === 'tf' ? 'Team Fortress' : s.folder === null ? null : 'Counter-Strike',
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
      rules: [{ name: 'mp_timelimit', value: '30' }],
      playerNames: s.playerNames.join('\n'),
    })),
  });
  // inet goes through SQL (the address filters compare it)
  await db.$executeRaw`UPDATE game_server SET ip = address::inet`;
  const rows = await db.gameServer.findMany({ select: { id: true, address: true, queryPort: true } });
  const idOf = new Map(rows.map((r) => [`${r.address}|${r.queryPort}`, r.id]));
  return { sourceId: source.id, crawlId: crawl.id, servers, ids: servers.map((s) => idOf.get(`${s.address}|${s.queryPort}`) as number), now };
}

/** Players of server `i` in the UTC hour `h` of any day: what both the raw samples and the day rows say. */
export const hourlyPlayers = (i: number, h: number): number => (i + h) % 20;
/** Map in hour h: 6-hour blocks alternate between two maps. */
export const hourlyMap = (h: number): string => (Math.floor(h / 6) % 2 === 0 ? 'de_dust2' : 'de_inferno');

/**
 * History of the given fleet servers: a raw sample every 5 minutes from `rawFrom` to now (every tenth
 * offline), and day rows with hourly slots (12 online samples an hour) for `days` days before
 * `rawFrom` (a UTC midnight).
 */
export async function seedHistory(db: PrismaClient, crawlId: number, serverIds: { i: number; id: number }[], rawFrom: Date, now: Date, days: number): Promise<void> {
  await db.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS server_sample_test_default PARTITION OF server_sample DEFAULT');
  const sid: number[] = [];
  const at: Date[] = [];
  const online: boolean[] = [];
  const players: number[] = [];
  const maps: string[] = [];
  for (const { i, id } of serverIds) {
    let n = 0;
    for (let t = rawFrom.getTime(); t < now.getTime(); t += 5 * 60_000, n++) {
      const h = new Date(t).getUTCHours();
      sid.push(id);
      at.push(new Date(t));
      online.push(n % 10 !== 9);
      players.push(n % 10 !== 9 ? hourlyPlayers(i, h) : 0);
      maps.push(hourlyMap(h));
    }
  }
  await db.$executeRaw`
    INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
    SELECT s, a, ${crawlId}, o, p::smallint, 0::smallint, 32::smallint, CASE WHEN o THEN m END, 20::smallint
    FROM unnest(${sid}::int[], ${at}::timestamptz[], ${online}::boolean[], ${players}::int[], ${maps}::text[]) AS x(s, a, o, p, m)`;

  const hours = Array.from({ length: 24 }, (_, h) => h);
  const dayRows = [];
  for (const { i, id } of serverIds) {
    for (let d = 1; d <= days; d++) {
      const day = new Date(rawFrom.getTime() - d * DAY);
      const ps = hours.map((h) => hourlyPlayers(i, h));
      dayRows.push({
        gameServerId: id,
        day,
        samples: 288,
        online: 288,
        playersMin: Math.min(...ps),
        playersMax: Math.max(...ps),
        playersSum: ps.reduce((a, p) => a + 12 * p, 0),
        botsMax: 0,
        topMap: 'de_dust2',
        hSamples: hours.map(() => 12),
        hOnline: hours.map(() => 12),
        hPlayersMin: ps,
        hPlayersMax: ps,
        hPlayersSum: ps.map((p) => 12 * p),
        hBotsMax: hours.map(() => 0),
        hMap: hours.map(hourlyMap),
      });
    }
  }
  await db.serverDay.createMany({ data: dayRows });
}

/** Population rollups: ALL and APP 10, hourly for `hourDays` days and daily for `dayDays` days before `until`. */
export async function seedPopulation(db: PrismaClient, until: Date, hourDays: number, dayDays: number): Promise<void> {
  const rows = [];
  for (const [dimension, key, scale] of [['ALL', '', 2], ['APP', '10', 1]] as const) {
    for (let k = 1; k <= hourDays * 24; k++) {
      const bucketAt = new Date(until.getTime() - k * HOUR);
      rows.push({ resolution: 'HOUR' as const, dimension, key, bucketAt, serversOnline: 10 * scale, serversSeen: 11 * scale, playersAvg: scale * (bucketAt.getUTCHours() + 1), playersPeak: scale * 30, botsAvg: 1 });
    }
    for (let k = 1; k <= dayDays; k++) {
      const bucketAt = new Date(until.getTime() - k * DAY);
      rows.push({ resolution: 'DAY' as const, dimension, key, bucketAt, serversOnline: 10 * scale, serversSeen: 12 * scale, playersAvg: 12.5 * scale, playersPeak: scale * 31, botsAvg: 1 });
    }
  }
  await db.populationRollup.createMany({ data: rows });
}
