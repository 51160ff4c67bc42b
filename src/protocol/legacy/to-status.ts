/**
 * Normalisation: each legacy protocol's decoded reply → the one ServerStatus shape (status.ts).
 * Per-game corrections come from quirks.ts only. Text: `raw` keeps every key/value as sent
 * (colour codes kept; recoded to UTF-8 only for games that send UTF-8), display fields
 * (`name`, `map`, player names) are the clean form (family colour codes and control bytes removed).
 */
import type { ServerStatus, StatusPlayer, StatusRule } from '../status';
import type { AseResponse } from './ase';
import { cleanText } from './color-codes';
import type { Doom3Response } from './doom3';
import type { Gamespy1Response } from './gamespy1';
import { groupGamespy1Pairs } from './gamespy1';
import type { Gamespy2Response, Gamespy2Table } from './gamespy2';
import type { Gamespy3Response, Jc2mpResponse } from './gamespy3';
import type { HalfLifeInfo, HalfLifeMessage, HalfLifeSourceInfo } from './halflife';
import { legacyQuirksFor } from './quirks';
import type { LegacyGameQuirks, LegacyProtocol } from './quirks';
import type { QuakeResponse } from './quake3';
import { QUAKE3_INFO_RESPONSE } from './quake3';
import { lookupKey, parseBoolOrNull, parseIntOrNull, toRecord } from './text';
import type { KeyValue } from './text';

interface Text {
  /** Wire text in the game's real encoding, colour codes kept. */
  raw(s: string): string;
  /** Display text: colour codes of the family and control bytes removed. */
  clean(s: string): string;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 when the bytes are valid UTF-8, else the byte-faithful text (gs3-minecraft-1 sends a latin1 §). */
function recodeUtf8(latin1: string): string {
  try {
    return strictUtf8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
}

function textFor(quirks: LegacyGameQuirks): Text {
  const raw = (s: string): string => (quirks.encoding === 'utf8' ? recodeUtf8(s) : s);
  return { raw, clean: (s) => cleanText(raw(s), quirks.colors).trim() };
}

function recodePairs(pairs: readonly KeyValue[], text: Text): KeyValue[] {
  return pairs.map(({ key, value }) => ({ key: text.raw(key), value: text.raw(value) }));
}

function rulesOf(pairs: readonly KeyValue[]): StatusRule[] {
  const record = toRecord(pairs);
  return Object.entries(record).map(([name, value]) => ({ name, value }));
}

function emptyStatus(protocol: ServerStatus['protocol']): ServerStatus {
  return {
    protocol, name: '', map: '', folder: null, game: null, appId: null, gameId: null, players: 0, maxPlayers: 0, bots: null,
    passwordProtected: null, vacSecured: null, dedicated: null, os: null, version: null, keywords: [], gamePort: null, steamId: null,
    playerList: [], rules: [], raw: null, pingMs: null,
  };
}

const intOr = (text: string | undefined, fallback: number): number => parseIntOrNull(text) ?? fallback;
const nullIfEmpty = (s: string | undefined): string | null => (s === undefined || s === '' ? null : s);

/** Quake 2 / Quake 3 family (statusResponse, infoResponse, print). */
export function quakeToStatus(response: QuakeResponse, protocol: 'quake2' | 'quake3'): ServerStatus {
  const latinRaw = toRecord(response.info);
  const quirks = legacyQuirksFor(protocol, latinRaw);
  const text = textFor(quirks);
  const raw = toRecord(recodePairs(response.info, text));
  const k = (...names: string[]): string | undefined => lookupKey(raw, ...names);
  const playerList: StatusPlayer[] = response.players.map((line) => {
    const [a, b, c] = line.numbers;
    const layout = quirks.quakePlayerLine ?? 'score-ping';
    const score = layout === 'ping' ? null : (a ?? null);
    const pingMs = layout === 'ping' ? (a ?? null) : (b ?? null);
    let team: string | null = null;
    if (layout === 'score-ping-team' && c !== undefined) team = String(c);
    if (quirks.quakeTeamAfterName === true && line.afterName !== '') team = line.afterName;
    const playerRaw: Record<string, string> = { name: text.raw(line.name), numbers: line.numbers.join(' ') };
    if (line.afterName !== '') playerRaw.afterName = text.raw(line.afterName);
    return { name: text.clean(line.name), score, durationSeconds: null, pingMs, team, raw: playerRaw };
  });
  const isInfo = response.header === QUAKE3_INFO_RESPONSE;
  const humans = parseIntOrNull(k('g_humanplayers'));
  const clients = parseIntOrNull(k('clients'));
  return {
    ...emptyStatus(protocol),
    name: text.clean(k('sv_hostname', 'hostname') ?? ''),
    map: text.clean(k('mapname') ?? ''),
    folder: nullIfEmpty(k('fs_game', 'game', 'gamename')?.trim()),
    game: quirks.gameName ?? nullIfEmpty(k('gamename')?.trim()),
    players: isInfo ? (clients ?? 0) : playerList.length,
    maxPlayers: intOr(k('sv_maxclients', 'maxclients'), 0),
    // Only getinfo says how many clients are bots (clients - g_humanplayers); ping 0 is a guess we do not make.
    bots: isInfo && humans !== null && clients !== null ? Math.max(0, clients - humans) : null,
    passwordProtected: parseBoolOrNull(k('g_needpass', 'pswrd', 'needpass')),
    dedicated: parseBoolOrNull(k('dedicated')),
    version: nullIfEmpty(k('version', 'shortversion')),
    playerList,
    rules: rulesOf(recodePairs(response.info, text)),
    raw,
  };
}

/** GameSpy v1 (\status\ reply). */
export function gamespy1ToStatus(response: Gamespy1Response): ServerStatus {
  const grouped = groupGamespy1Pairs(response.pairs);
  const quirks = legacyQuirksFor('gamespy1', grouped.info);
  const text = textFor(quirks);
  const raw = toRecord(recodePairs(response.pairs, text));
  const info = toRecord(recodePairs(Object.entries(grouped.info).map(([key, value]) => ({ key, value })), text));
  const k = (...names: string[]): string | undefined => lookupKey(info, ...names);
  const numPlayers = parseIntOrNull(k('numplayers'));
  let records = grouped.players;
  if (quirks.dedupeBy !== undefined) {
    const seen = new Set<string>();
    records = records.filter((r) => {
      const id = r.fields[quirks.dedupeBy!];
      if (id === undefined || id === '') return true;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  }
  if (quirks.trimToNumPlayers === true && numPlayers !== null) records = records.slice(0, numPlayers);
  const teamNames = new Map(grouped.teams.map((t) => [t.index, text.clean(t.name)]));
  const playerList: StatusPlayer[] = records.map((r) => {
    const f = r.fields;
    let name = text.clean(f.player ?? f.playername ?? f.name ?? '');
    if (quirks.namePrefix !== undefined) name = name.replace(quirks.namePrefix, '');
    let team: string | null = quirks.ignoreTeam === true ? null : nullIfEmpty(f.team);
    if (team !== null && quirks.teamIndexBase !== undefined) {
      const n = parseIntOrNull(team);
      if (n !== null) team = teamNames.get(n - quirks.teamIndexBase) ?? team;
    }
    if (team !== null && team === quirks.spectatorTeam) team = 'spectator';
    const playerRaw = Object.fromEntries(Object.entries(f).map(([key, value]) => [key, text.raw(value)]));
    return {
      name,
      score: parseIntOrNull(f.score ?? f.frags),
      durationSeconds: null,
      pingMs: parseIntOrNull(f.ping),
      team,
      deaths: parseIntOrNull(f.deaths),
      raw: playerRaw,
    };
  });
  return {
    ...emptyStatus('gamespy1'),
    name: text.clean(k('hostname') ?? ''),
    map: text.clean(k(quirks.mapKey ?? 'mapname', 'mapname') ?? ''),
    folder: nullIfEmpty(k('gamename')),
    game: quirks.gameName ?? nullIfEmpty(k('gamename')),
    players: numPlayers ?? playerList.length,
    maxPlayers: intOr(k('maxplayers'), 0),
    passwordProtected: parseBoolOrNull(k('password')),
    dedicated: parseBoolOrNull(k('dedicated')),
    version: nullIfEmpty(k('gamever')),
    gamePort: parseIntOrNull(k('hostport')),
    playerList,
    rules: Object.entries(info).map(([name, value]) => ({ name, value })),
    raw,
    ...(response.complete ? {} : { partial: true }),
  };
}

interface TableLike {
  rows: Array<Record<string, string>>;
}

function tablePlayers(players: TableLike, teams: TableLike, quirks: LegacyGameQuirks, text: Text): StatusPlayer[] {
  const teamNames = teams.rows.map((row) => text.clean(row.team_t ?? row.team ?? ''));
  return players.rows
    .filter((row) => Object.keys(row).length > 0)
    .map((row) => {
      let name = text.clean(row.player_ ?? row.name_ ?? '');
      if (quirks.trimPlayerNames === true) name = name.trim();
      let team: string | null = quirks.ignoreTeam === true ? null : nullIfEmpty(row.team_);
      if (team !== null) {
        const n = parseIntOrNull(team);
        const index = n === null ? null : n - (quirks.teamIndexBase ?? 0);
        if (index !== null && teamNames[index] !== undefined && teamNames[index] !== '') team = teamNames[index]!;
      }
      return {
        name,
        score: parseIntOrNull(row.score_),
        durationSeconds: null,
        pingMs: parseIntOrNull(row.ping_),
        team,
        deaths: parseIntOrNull(row.deaths_),
        raw: Object.fromEntries(Object.entries(row).map(([key, value]) => [key, text.raw(value)])),
      };
    });
}

function gamespyServerStatus(protocol: 'gamespy2' | 'gamespy3', server: readonly KeyValue[], quirks: LegacyGameQuirks, text: Text, playerList: StatusPlayer[]): ServerStatus {
  const raw = toRecord(recodePairs(server, text));
  const k = (...names: string[]): string | undefined => lookupKey(raw, ...names);
  return {
    ...emptyStatus(protocol),
    name: text.clean(k('hostname') ?? ''),
    map: text.clean(k(quirks.mapKey ?? 'mapname', 'mapname', 'map') ?? ''),
    folder: nullIfEmpty(k('gamename', 'game_id')),
    game: quirks.gameName ?? nullIfEmpty(k('gamename')),
    players: parseIntOrNull(k('numplayers')) ?? playerList.length,
    maxPlayers: intOr(k('maxplayers'), 0),
    passwordProtected: parseBoolOrNull(k('password')),
    dedicated: parseBoolOrNull(k('dedicated', 'bf2_dedicated')),
    version: nullIfEmpty(k('gamever', 'version')),
    gamePort: parseIntOrNull(k('hostport')),
    playerList,
    rules: rulesOf(recodePairs(server, text)),
    raw,
  };
}

function gs2TableRows(table: Gamespy2Table | null): TableLike {
  if (table === null) return { rows: [] };
  return { rows: table.rows.map((row) => Object.fromEntries(table.fields.map((f, i) => [f, row[i] ?? '']))) };
}

/** GameSpy v2: the server reply and the players/teams reply may be separate responses. */
export function gamespy2ToStatus(responses: readonly Gamespy2Response[]): ServerStatus {
  const server = responses.flatMap((r) => r.server ?? []);
  const quirks = legacyQuirksFor('gamespy2', toRecord(server));
  const text = textFor(quirks);
  const players = responses.map((r) => r.players).find((t) => t !== null) ?? null;
  const teams = responses.map((r) => r.teams).find((t) => t !== null) ?? null;
  return gamespyServerStatus('gamespy2', server, quirks, text, tablePlayers(gs2TableRows(players), gs2TableRows(teams), quirks, text));
}

export function gamespy3ToStatus(response: Gamespy3Response): ServerStatus {
  const quirks = legacyQuirksFor('gamespy3', toRecord(response.server));
  const text = textFor(quirks);
  const playerList = tablePlayers(response.players, response.teams, quirks, text);
  const status = gamespyServerStatus('gamespy3', response.server, quirks, text, playerList);
  // BF2 marks bots per row (AIBot_); elsewhere bots are unknown.
  if (response.players.fields.includes('AIBot_')) status.bots = response.players.rows.filter((r) => r.AIBot_ === '1').length;
  return response.complete ? status : { ...status, partial: true };
}

export function jc2mpToStatus(response: Jc2mpResponse): ServerStatus {
  // The marker key only selects the JC2MP entry of the quirk table; it is not part of raw.
  const quirks = legacyQuirksFor('gamespy3', { ...toRecord(response.server), __jc2mp: '1' });
  const text = textFor(quirks);
  const playerList: StatusPlayer[] = response.players.map((p) => ({
    name: text.clean(p.name), score: null, durationSeconds: null, pingMs: p.pingMs,
    raw: { name: text.raw(p.name), steamid: p.steamId, ping: String(p.pingMs) },
  }));
  return gamespyServerStatus('gamespy3', response.server, quirks, text, playerList);
}

/** Doom 3 family. */
export function doom3ToStatus(response: Doom3Response): ServerStatus {
  const latinRaw = toRecord(response.info);
  const quirks = legacyQuirksFor('doom3', latinRaw);
  const text = textFor(quirks);
  const raw = toRecord(recodePairs(response.info, text));
  const k = (...names: string[]): string | undefined => lookupKey(raw, ...names);
  const playerList: StatusPlayer[] = response.players.map((p) => {
    const playerRaw: Record<string, string> = { id: String(p.id), name: text.raw(p.name), ping: String(p.pingMs) };
    if (p.clanTag !== null) playerRaw.clanTag = text.raw(p.clanTag);
    if (p.rate !== null) playerRaw.rate = String(p.rate);
    if (p.isBot !== null) playerRaw.bot = p.isBot ? '1' : '0';
    return { name: text.clean(p.name), score: null, durationSeconds: null, pingMs: p.pingMs, raw: playerRaw };
  });
  // ETQW reports the map as maps/<name>.entities (§5.4).
  const map = (k('si_map') ?? '').replace(/^maps\//, '').replace(/\.entities$/, '');
  const anyBotFlag = response.players.some((p) => p.isBot !== null);
  return {
    ...emptyStatus('doom3'),
    name: text.clean(k('si_name') ?? ''),
    map: text.clean(map),
    folder: nullIfEmpty(k('fs_game')) ?? nullIfEmpty(k('gamename')),
    game: quirks.gameName ?? nullIfEmpty(k('gamename')),
    players: response.players.length,
    maxPlayers: intOr(k('si_maxPlayers'), 0),
    bots: anyBotFlag || response.etqw !== null ? response.players.filter((p) => p.isBot === true).length : null,
    passwordProtected: parseBoolOrNull(k('si_usepass', 'si_needPass')),
    dedicated: parseBoolOrNull(k('net_serverDedicated')),
    version: nullIfEmpty(k('si_version')),
    playerList,
    rules: rulesOf(recodePairs(response.info, text)),
    raw,
  };
}

/** Half-Life: the replies to details/info, players and rules together (first of each type wins). */
export function halfLifeToStatus(messages: readonly HalfLifeMessage[]): ServerStatus {
  const info = messages.find((m): m is HalfLifeInfo | HalfLifeSourceInfo => m.type === 'm' || m.type === 'I' || m.type === 'C');
  const playersMessage = messages.find((m) => m.type === 'D');
  const rulesMessage = messages.find((m) => m.type === 'E');
  const infostring = messages.find((m) => m.type === 'infostring');
  const quirks = legacyQuirksFor('halflife', {});
  const text = textFor(quirks);
  const rulePairs = rulesMessage?.type === 'E' ? recodePairs(rulesMessage.rules, text) : [];
  const istr = infostring?.type === 'infostring' ? toRecord(infostring.pairs) : {};
  const raw: Record<string, string> = { ...istr, ...toRecord(rulePairs) };
  const status = emptyStatus('halflife');
  if (info !== undefined) {
    Object.assign(status, {
      name: text.clean(info.hostname), map: info.map, folder: info.gamedir, game: info.description,
      players: info.numPlayers, maxPlayers: info.maxPlayers, version: info.type === 'I' ? info.version : String(info.protocol),
    });
    if (info.type !== 'C') {
      status.bots = info.bots;
      status.passwordProtected = info.passwordProtected;
      status.vacSecured = info.secure;
      status.dedicated = info.serverType === null ? null : info.serverType === 'd';
      status.os = info.os === 'w' ? 'windows' : info.os === 'l' ? 'linux' : null;
    }
    if (info.type === 'I') {
      status.appId = info.appId;
      status.gameId = info.gameId;
      status.steamId = info.steamId;
      status.gamePort = info.gamePort;
    }
  } else if (infostring !== undefined) {
    const k = (n: string): string | undefined => lookupKey(istr, n);
    Object.assign(status, {
      name: text.clean(k('hostname') ?? ''), map: k('map') ?? '', folder: nullIfEmpty(k('gamedir')), game: nullIfEmpty(k('description')),
      players: intOr(k('players'), 0), maxPlayers: intOr(k('max'), 0), bots: parseIntOrNull(k('bots')),
      passwordProtected: parseBoolOrNull(k('password')), vacSecured: parseBoolOrNull(k('secure')),
    });
  }
  if (playersMessage?.type === 'D') {
    status.playerList = playersMessage.players.map((p) => ({
      name: text.clean(p.name), score: p.score, durationSeconds: p.durationSeconds, pingMs: null,
      raw: { index: String(p.index), name: text.raw(p.name) },
    }));
  }
  status.rules = rulesOf(rulePairs);
  status.raw = raw;
  return status;
}

/** All-Seeing Eye. */
export function aseToStatus(response: AseResponse): ServerStatus {
  const header: Record<string, string> = {
    gamename: response.gameName, hostport: response.gamePort, hostname: response.hostname, gametype: response.gameType,
    map: response.map, version: response.version, password: response.password, numplayers: response.numPlayers, maxplayers: response.maxPlayers,
  };
  const quirks = legacyQuirksFor('ase', header);
  const text = textFor(quirks);
  const rulePairs = recodePairs(response.rules, text);
  const rawHeader = Object.fromEntries(Object.entries(header).map(([key, value]) => [key, text.raw(value)]));
  return {
    ...emptyStatus('ase'),
    name: text.clean(response.hostname),
    map: text.clean(response.map),
    folder: nullIfEmpty(response.gameName),
    game: quirks.gameName ?? nullIfEmpty(response.gameName),
    players: intOr(response.numPlayers, response.players.length),
    maxPlayers: intOr(response.maxPlayers, 0),
    passwordProtected: parseBoolOrNull(response.password),
    version: nullIfEmpty(text.raw(response.version)),
    gamePort: parseIntOrNull(response.gamePort),
    playerList: response.players.map((p) => {
      const playerRaw: Record<string, string> = {};
      for (const field of ['name', 'team', 'skin', 'score', 'ping', 'time'] as const) if (p[field] !== undefined) playerRaw[field] = text.raw(p[field]);
      return {
        name: text.clean(p.name ?? ''), score: parseIntOrNull(p.score), durationSeconds: null, pingMs: parseIntOrNull(p.ping),
        team: nullIfEmpty(p.team === undefined ? undefined : text.clean(p.team)), raw: playerRaw,
      };
    }),
    rules: rulesOf(rulePairs),
    raw: { ...rawHeader, ...toRecord(rulePairs) },
  };
}

export type { LegacyProtocol };
